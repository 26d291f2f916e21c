#pragma once
// Why: one enqueued op seen from Python. It owns the runrun_handle and keeps alive what the
// runtime borrows (input/output capsules, the Runtime object) until the op completed, so Python
// may drop its own references at any time without freeing memory under the runtime. Dropping a
// handle never waits: an op still running is parked (orphaned_ops.h) until it completes.
// Threading: methods are called with the GIL held; wait() releases it while blocking.

#include <runrun/c_api.h>
#include <pybind11/pybind11.h>

#include <cstddef>
#include <string>
#include <vector>

namespace runrun::python {

class Handle {
 public:
  // Takes ownership of `handle`; `keep_alive` holds the borrowed tensors and the runtime.
  Handle(runrun_handle* handle, std::string op, std::string name,
         std::vector<pybind11::object> keep_alive);
  ~Handle();
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;

  // True once the op finished (successfully or not). Never blocks.
  bool poll();
  // Blocks (GIL released, no spinning) until done or `timeout_seconds` passed (< 0: no limit).
  // Returns false on timeout; raises the op's error when it failed. Checks for Ctrl-C while
  // waiting.
  bool wait(double timeout_seconds);
  // Outputs the runtime allocated, as "dltensor" capsules (`index` of a grouped op).
  pybind11::capsule take_output(std::size_t index);
  std::vector<int64_t> received_splits();
  int32_t join_result();

  const std::string& op() const { return op_; }
  const std::string& name() const { return name_; }

 private:
  void raise_if_failed(runrun_status status);
  runrun_handle* require_handle(const char* what) const;

  runrun_handle* handle_;
  std::string op_;
  std::string name_;
  std::vector<pybind11::object> keep_alive_;
  bool done_ = false;
};

void bind_handle(pybind11::module_& m);

}  // namespace runrun::python
