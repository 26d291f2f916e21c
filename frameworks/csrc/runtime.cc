#include "csrc/runtime.h"

#include <pybind11/stl.h>

#include <unistd.h>

#include <algorithm>

#include "csrc/errors.h"
#include "csrc/orphaned_ops.h"
#include "csrc/xla_ffi_runtime.h"

namespace py = pybind11;

namespace runrun::python {

Runtime::Runtime(std::optional<std::string> backend) {
  runrun_status status;
  {
    py::gil_scoped_release release;
    status = runrun_init(backend ? backend->c_str() : nullptr, &rt_);
  }
  check_status(status, "runrun_init");
  owner_pid_ = getpid();
  xla_ffi_attach(rt_);
}

Runtime::~Runtime() {
  // A forked child's copy: XLA's threads (which may have held the attach lock) and the
  // runtime's stayed in the parent; the C API does nothing there either (fork_generation.h).
  if (rt_ == nullptr || getpid() != owner_pid_) return;
  py::gil_scoped_release release;
  runrun_shutdown(rt_);  // fails the ops in flight, so detach cannot wait for ever
  xla_ffi_detach(rt_);
  runrun_destroy(rt_);
}

runrun_runtime* Runtime::get() const {
  if (rt_ == nullptr) raise_status(RUNRUN_SHUT_DOWN, "the runrun runtime was destroyed");
  return rt_;
}

void Runtime::shutdown() {
  runrun_status status;
  {
    py::gil_scoped_release release;
    status = runrun_shutdown(get());
  }
  reap_orphaned_ops();  // every op of this runtime has completed now
  check_status(status, "runrun_shutdown");
}

bool Runtime::is_running() const { return rt_ != nullptr && runrun_is_running(rt_) != 0; }

runrun_topology Runtime::topology() const {
  runrun_topology topology{};
  check_status(runrun_get_topology(get(), &topology), "runrun_get_topology");
  return topology;
}

std::string Runtime::backend_name() const {
  const char* name = runrun_backend_name(get());
  return name ? name : "";
}

int32_t Runtime::add_process_set(const std::vector<int32_t>& ranks) {
  int32_t id = -1;
  runrun_status status;
  {
    py::gil_scoped_release release;
    status = runrun_add_process_set(get(), ranks.data(), ranks.size(), &id);
  }
  check_status(status, "runrun_add_process_set");
  return id;
}

void Runtime::remove_process_set(int32_t id) {
  runrun_status status;
  {
    py::gil_scoped_release release;
    status = runrun_remove_process_set(get(), id);
  }
  check_status(status, "runrun_remove_process_set");
}

std::vector<int32_t> Runtime::process_set_ranks(int32_t id) const {
  // A set never has more ranks than the world.
  std::vector<int32_t> ranks(static_cast<std::size_t>(std::max(topology().size, 1)));
  std::size_t n = 0;
  check_status(runrun_process_set_ranks(get(), id, ranks.data(), ranks.size(), &n),
               "runrun_process_set_ranks");
  ranks.resize(std::min(n, ranks.size()));
  return ranks;
}

int32_t Runtime::process_set_rank(int32_t id) const { return runrun_process_set_rank(get(), id); }

void Runtime::start_timeline(const std::string& path, bool mark_cycles) {
  check_status(runrun_start_timeline_marking_cycles(get(), path.c_str(), mark_cycles ? 1 : 0),
               "runrun_start_timeline");
}

void Runtime::stop_timeline() { check_status(runrun_stop_timeline(get()), "runrun_stop_timeline"); }

void bind_runtime(py::module_& m) {
  py::class_<runrun_topology>(m, "Topology")
      .def_readonly("rank", &runrun_topology::rank)
      .def_readonly("size", &runrun_topology::size)
      .def_readonly("local_rank", &runrun_topology::local_rank)
      .def_readonly("local_size", &runrun_topology::local_size)
      .def_readonly("cross_rank", &runrun_topology::cross_rank)
      .def_readonly("cross_size", &runrun_topology::cross_size)
      .def_property_readonly("homogeneous",
                             [](const runrun_topology& t) { return t.homogeneous != 0; });

  py::class_<Runtime> cls(m, "Runtime", "One runrun runtime (one per process).");
  cls.def(py::init<std::optional<std::string>>(), py::arg("backend") = py::none())
      .def("shutdown", &Runtime::shutdown)
      .def("is_running", &Runtime::is_running)
      .def("topology", &Runtime::topology)
      .def("backend_name", &Runtime::backend_name)
      .def("add_process_set", &Runtime::add_process_set, py::arg("ranks"))
      .def("remove_process_set", &Runtime::remove_process_set, py::arg("process_set_id"))
      .def("process_set_ranks", &Runtime::process_set_ranks, py::arg("process_set_id"))
      .def("process_set_rank", &Runtime::process_set_rank, py::arg("process_set_id"))
      .def("start_timeline", &Runtime::start_timeline, py::arg("path"),
           py::arg("mark_cycles") = false)
      .def("stop_timeline", &Runtime::stop_timeline)
      .def(
          "counters",
          [](const Runtime& self, int32_t process_set) {
            runrun_counters c{};
            check_status(runrun_get_counters(self.get(), process_set, &c), "runrun_get_counters");
            py::dict d;
            d["negotiation_rounds"] = c.negotiation_rounds;
            d["coordinator_rounds"] = c.coordinator_rounds;
            d["cache_hits"] = c.cache_hits;
            d["fused_collectives"] = c.fused_collectives;
            return d;
          },
          py::arg("process_set_id") = 0,
          "This rank's negotiation counters of a process set since init (benchmarks, tests).")
      .def(
          "rank_lateness",
          [](const Runtime& self) {
            size_t n = 0;
            check_status(runrun_get_rank_lateness(self.get(), nullptr, 0, &n),
                         "runrun_get_rank_lateness");
            std::vector<runrun_rank_lateness> ranks(n);
            check_status(runrun_get_rank_lateness(self.get(), ranks.data(), n, &n),
                         "runrun_get_rank_lateness");
            py::list out;
            for (size_t r = 0; r < std::min(n, ranks.size()); ++r) {
              py::dict d;
              d["median_s"] = ranks[r].median_s;
              d["mean_s"] = ranks[r].mean_s;
              d["samples"] = ranks[r].samples;
              out.append(d);
            }
            return out;
          },
          "runrun --profile: each rank's lateness in the global set's negotiation (rank 0; "
          "empty elsewhere or when not profiling), docs/profiling.md.");
  bind_collectives(cls);
}

}  // namespace runrun::python
