#pragma once
// Why: the runtime the XLA FFI handler enqueues into (xla_ffi.h): set by Runtime, read by the
// handler on XLA's threads for the duration of one op.
// Threading: a RuntimeLease holds a shared lock, so detach (exclusive) waits for the handlers in
// flight; hold a lease only while enqueueing and waiting for one op.

#include <runrun/c_api.h>

#include <shared_mutex>

namespace runrun::python {

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
