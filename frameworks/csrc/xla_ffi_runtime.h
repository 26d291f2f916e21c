#pragma once
// Why: the runtime the XLA FFI handlers enqueue into (xla_ffi_targets.h): Python creates and
// destroys it (init, shutdown, elastic re-init), so Runtime attaches it here when created and
// detaches it before destroying it; a handler reads it for the duration of one op.
// Threading: attach/detach from any thread; detach waits until no handler uses the runtime (the
// caller shuts it down first, so that every op in flight completes). A RuntimeLease holds a
// shared lock: hold one only while enqueueing and waiting for one op.

#include <runrun/c_api.h>

#include <shared_mutex>

namespace runrun::python {

void xla_ffi_attach(runrun_runtime* rt);
void xla_ffi_detach(runrun_runtime* rt);

class RuntimeLease {
 public:
  RuntimeLease();
  // nullptr when no runtime is attached (before init() or after shutdown()).
  runrun_runtime* get() const { return rt_; }

 private:
  std::shared_lock<std::shared_mutex> lock_;
  runrun_runtime* rt_;
};

}  // namespace runrun::python
