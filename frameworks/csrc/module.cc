// Why: entry point of runrun._core. Binds the C API's queries, the Runtime, the Handle and the
// job store (an elastic driver's rendezvous server and client, csrc/job_store.h).
// Nothing here knows a framework: tensors are DLPack capsules.

#include <runrun/c_api.h>
#include <runrun/dlpack_rules.h>
#include <pybind11/pybind11.h>

#include "csrc/elastic.h"
#include "csrc/errors.h"
#include "csrc/bound_call.h"
#include "csrc/fast_enqueue.h"
#include "csrc/handle.h"
#include "csrc/job_store.h"
#include "csrc/orphaned_ops.h"
#include "csrc/runtime.h"
#include "csrc/xla_ffi.h"

namespace py = pybind11;

PYBIND11_MODULE(_core, m) {
  m.doc() = "runrun's C API for Python (DLPack tensors in and out).";
  m.def("version", [] { return std::string(runrun_version()); });
  m.def("build_info", [] {
    runrun_build_info info{};
    runrun_get_build_info(&info);
    py::dict out;
    out["mpi"] = info.mpi != 0;
    out["gloo"] = info.gloo != 0;
    out["nccl"] = info.nccl != 0;
    out["cuda"] = info.cuda != 0;
    return out;
  });
  m.def("orphaned_op_count", &runrun::python::orphaned_op_count,
        "Ops whose handle was dropped before they completed and that still run (for tests).");
  m.def("mpi_threads_supported", [] { return runrun_mpi_threads_supported() != 0; });
  m.def(
      "set_cuda_stream",
      [](uintptr_t stream) { runrun_set_cuda_stream(reinterpret_cast<void*>(stream)); },
      "The CUDA stream (cudaStream_t as an int) of this thread's next CUDA tensors.");
  m.def(
      "cuda_stream_wait_host",
      [](uintptr_t stream, int32_t device) {
        runrun_status status = RUNRUN_OK;
        {
          py::gil_scoped_release released;
          status = runrun_cuda_stream_wait_host(reinterpret_cast<void*>(stream), device);
        }
        runrun::python::check_status(status, "cuda_stream_wait_host");
      },
      "Blocks (GIL released) until the work enqueued so far on the CUDA stream (an int) of "
      "the device ran (runrun_cuda_stream_wait_host).");
  m.attr("STATUS_IN_PROGRESS") = static_cast<int>(RUNRUN_IN_PROGRESS);
  // The dtypes the runtime accepts, by name, in the order messages list them
  // (runrun/dlpack_rules.h): the adapters' SUPPORTED_DTYPES are made from it.
  py::tuple accepted(runrun::dlpack_rules::kNumAcceptedDtypes);
  for (size_t i = 0; i < runrun::dlpack_rules::kNumAcceptedDtypes; ++i) {
    accepted[i] = py::str(runrun::dlpack_rules::kAcceptedDtypes[i].name.data(),
                          runrun::dlpack_rules::kAcceptedDtypes[i].name.size());
  }
  m.attr("ACCEPTED_DTYPES") = accepted;
  runrun::python::bind_handle(m);
  runrun::python::bind_runtime(m);
  runrun::python::bind_elastic(m);
  runrun::python::bind_job_store(m);
  runrun::python::bind_fast_enqueue(m);
  runrun::python::bind_bound_calls(m);
  runrun::python::bind_xla_ffi(m);
}
