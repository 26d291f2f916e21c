#include "csrc/xla_ffi_runtime.h"

#include "csrc/xla_ffi.h"

namespace runrun::python {
namespace {

std::shared_mutex& attach_mutex() {
  static std::shared_mutex mutex;
  return mutex;
}
runrun_runtime* g_attached = nullptr;  // guarded by attach_mutex()

}  // namespace

RuntimeLease::RuntimeLease() : lock_(attach_mutex()), rt_(g_attached) {}

void xla_ffi_attach(runrun_runtime* rt) {
  std::unique_lock<std::shared_mutex> lock(attach_mutex());
  g_attached = rt;
}

void xla_ffi_detach(runrun_runtime* rt) {
  std::unique_lock<std::shared_mutex> lock(attach_mutex());
  if (g_attached == rt) g_attached = nullptr;
}

}  // namespace runrun::python

#ifndef RUNRUN_HAVE_XLA_FFI
namespace runrun::python {
// Built without the XLA FFI header (jax was not installed when CMake configured): no native
// target; runrun.jax uses its io_callback path.
void bind_xla_ffi(pybind11::module_&) {}
}  // namespace runrun::python
#endif
