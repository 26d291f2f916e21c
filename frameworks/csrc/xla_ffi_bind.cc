// What runrun._core exposes of the XLA FFI handlers (xla_ffi.h): their capsules per platform,
// for jax.ffi.register_ffi_target (frameworks/python/runrun/jax/ffi_ops.py), the name counters'
// reset, and runrun --profile's records (xla_ffi_profile.h).

#include <pybind11/pybind11.h>

#include "csrc/xla_ffi.h"
#include "csrc/xla_ffi_profile.h"
#include "csrc/xla_ffi_targets.h"

namespace py = pybind11;

namespace runrun::python {
namespace {

py::capsule target(XLA_FFI_Error* (*handler)(XLA_FFI_CallFrame*)) {
  return py::capsule(reinterpret_cast<void*>(handler), "xla._CUSTOM_CALL_TARGET");
}

py::tuple take_profile_records() {
  ProfileBatch batch = profile_take();
  py::list records;
  for (const ProfileRecord& r : batch.records) {
    records.append(py::make_tuple(r.profiler, r.kind, r.start, r.end, r.bytes));
  }
  return py::make_tuple(records, batch.dropped);
}

void bind_profile(py::module_& m) {
  m.def("xla_ffi_profile_take", &take_profile_records,
        "(records, dropped): the profiled jit allreduces and step ends since the last call, in "
        "order, as (profiler id, kind 0 allreduce / 1 step end, start, end, bytes).");
  m.def("xla_ffi_profile_wait", &profile_wait, py::arg("timeout_s"),
        py::call_guard<py::gil_scoped_release>(),
        "Waits (GIL released) until a batch of step ends is recorded, a wake() or the timeout.");
  m.def("xla_ffi_profile_wake", &profile_wake, "Ends a wait() now.");
  m.def("xla_ffi_profile_set_batch", &profile_set_batch, py::arg("steps"),
        "How many step ends make a batch that ends a wait().");
  m.def("xla_ffi_clock", &profile_clock, "The clock of the records (CLOCK_MONOTONIC s).");
}

}  // namespace

void bind_xla_ffi(py::module_& m) {
  py::dict info;
  info["target"] = target(&xla_ffi_collective_cpu);
  info["cuda_target"] = target(&xla_ffi_collective_cuda);
  info["mark_target"] = target(&xla_ffi_profile_mark);
  info["api_version"] = py::make_tuple(XLA_FFI_API_MAJOR, XLA_FFI_API_MINOR);
  m.attr("xla_ffi") = info;
  m.def("xla_ffi_forget", &xla_ffi_forget_names, py::arg("set_id"),
        "Restarts the counters of unnamed jit ops of a process set (all sets when < 0).");
  bind_profile(m);
}

}  // namespace runrun::python
