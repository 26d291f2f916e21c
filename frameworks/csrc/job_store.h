#pragma once
// Why: runrun.ray's elastic driver (frameworks/python/runrun/ray/elastic_driver.py) serves the
// job's rendezvous store for the whole job and publishes the generations in it, as the
// launcher's elastic driver does; these are the C API's job store (c_api.h, "job store") as
// Python classes, so the protocol and its secret handshake stay the C++ ones.
//   JobStoreServer(bind_address, port, secret_hex): .port, .refused, .stop()
//   JobStoreClient(host, port, secret_hex, timeout_s, who): .set/.get/.add/.check, .close()
// Threading: every call that waits on the network releases the GIL (a store round trip, the
// connection with its retries, the server's stop); a client's calls are serialised by the C++
// client, so one client may be shared by threads. Failures raise runrun's exceptions.

#include <pybind11/pybind11.h>

namespace runrun::python {

void bind_job_store(pybind11::module_& m);

}  // namespace runrun::python
