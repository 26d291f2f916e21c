#include "csrc/job_store.h"

#include <runrun/c_api.h>

#include <string>

#include "csrc/errors.h"

namespace py = pybind11;

namespace runrun::python {
namespace {

// The server; stop() (or the object's end) stops serving.
class JobStoreServer {
 public:
  JobStoreServer(const std::string& bind_address, uint16_t port, const std::string& secret_hex) {
    runrun_status status = RUNRUN_OK;
    {
      py::gil_scoped_release release;
      status = runrun_store_server_start(bind_address.c_str(), port, secret_hex.c_str(), &server_);
    }
    check_status(status, "JobStoreServer");
  }
  ~JobStoreServer() { stop(); }
  JobStoreServer(const JobStoreServer&) = delete;
  JobStoreServer& operator=(const JobStoreServer&) = delete;

  uint16_t port() const { return runrun_store_server_port(server_); }
  size_t refused() const { return runrun_store_server_refused(server_); }
  void stop() {
    if (server_ == nullptr) return;
    runrun_store_server* server = server_;
    server_ = nullptr;
    py::gil_scoped_release release;  // joins the server's thread
    runrun_store_server_stop(server);
  }

 private:
  runrun_store_server* server_ = nullptr;
};

class JobStoreClient {
 public:
  JobStoreClient(const std::string& host, uint16_t port, const std::string& secret_hex,
                 double timeout_s, const std::string& who) {
    runrun_status status = RUNRUN_OK;
    {
      py::gil_scoped_release release;  // connects with retries within timeout_s
      status = runrun_store_client_connect(host.c_str(), port, secret_hex.c_str(), timeout_s,
                                           who.c_str(), &client_);
    }
    check_status(status, "JobStoreClient");
  }
  ~JobStoreClient() { close(); }
  JobStoreClient(const JobStoreClient&) = delete;
  JobStoreClient& operator=(const JobStoreClient&) = delete;

  void set(uint64_t generation, const std::string& key, const py::bytes& value) {
    const std::string data = value;
    runrun_status status = RUNRUN_OK;
    {
      py::gil_scoped_release release;
      status = runrun_store_client_set(client_, generation, key.c_str(), data.data(), data.size());
    }
    check_status(status, "JobStoreClient.set");
  }

  py::object get(uint64_t generation, const std::string& key) {
    int found = 0;
    char* value = nullptr;
    size_t size = 0;
    runrun_status status = RUNRUN_OK;
    {
      py::gil_scoped_release release;
      status = runrun_store_client_get(client_, generation, key.c_str(), &found, &value, &size);
    }
    check_status(status, "JobStoreClient.get");
    if (found == 0) return py::none();
    py::bytes out(value, size);
    runrun_store_free(value);
    return out;
  }

  int64_t add(uint64_t generation, const std::string& key, int64_t delta) {
    int64_t result = 0;
    runrun_status status = RUNRUN_OK;
    {
      py::gil_scoped_release release;
      status = runrun_store_client_add(client_, generation, key.c_str(), delta, &result);
    }
    check_status(status, "JobStoreClient.add");
    return result;
  }

  bool check(uint64_t generation, const std::string& key) {
    int exists = 0;
    runrun_status status = RUNRUN_OK;
    {
      py::gil_scoped_release release;
      status = runrun_store_client_check(client_, generation, key.c_str(), &exists);
    }
    check_status(status, "JobStoreClient.check");
    return exists != 0;
  }

  void close() {
    runrun_store_client_close(client_);  // closes a socket: does not block
    client_ = nullptr;
  }

 private:
  runrun_store_client* client_ = nullptr;
};

}  // namespace

void bind_job_store(py::module_& m) {
  py::class_<JobStoreServer>(m, "JobStoreServer",
                             "A job's rendezvous store served by this process (c_api.h, "
                             "\"job store\"): an elastic driver's, for the whole job.")
      .def(py::init<const std::string&, uint16_t, const std::string&>(), py::arg("bind_address"),
           py::arg("port"), py::arg("secret_hex"))
      .def_property_readonly("port", &JobStoreServer::port)
      .def_property_readonly("refused", &JobStoreServer::refused,
                             "Connections refused so far (wrong secret, protocol errors).")
      .def("stop", &JobStoreServer::stop, "Stops serving; idempotent.");
  py::class_<JobStoreClient>(m, "JobStoreClient",
                             "An authenticated connection to a job's rendezvous store; every "
                             "request is bounded by timeout_s.")
      .def(py::init<const std::string&, uint16_t, const std::string&, double, const std::string&>(),
           py::arg("host"), py::arg("port"), py::arg("secret_hex"), py::arg("timeout_s"),
           py::arg("who"))
      .def("set", &JobStoreClient::set, py::arg("generation"), py::arg("key"), py::arg("value"))
      .def("get", &JobStoreClient::get, py::arg("generation"), py::arg("key"),
           "The value (bytes), or None when the key does not exist; never waits.")
      .def("add", &JobStoreClient::add, py::arg("generation"), py::arg("key"), py::arg("delta"),
           "Adds delta to a counter (absent: 0); the new value.")
      .def("check", &JobStoreClient::check, py::arg("generation"), py::arg("key"))
      .def("close", &JobStoreClient::close);
}

}  // namespace runrun::python
