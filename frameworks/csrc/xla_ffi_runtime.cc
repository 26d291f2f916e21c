#include "csrc/xla_ffi_runtime.h"

#include <mutex>

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
