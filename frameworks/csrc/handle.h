#pragma once
// Why: one enqueued op seen from Python, and the handle every adapter returns from its *_async
// ops (runrun.common.handles): one object per op, no Python wrapper. It owns the runrun_handle
// and keeps alive what the runtime borrows (input/output capsules, the Runtime object) until the
// op completed, so Python may drop its own references at any time without freeing memory under
// the runtime. It also carries the op's result: `result` (e.g. the in-place tensor) or
// `finish(handle)`, which builds it once the op succeeded (e.g. from take_output). Dropping a
// handle never waits: an op still running is parked (orphaned_ops.h) until it completes.
// Threading: methods are called with the GIL held (one thread at a time per handle); waiting
// releases it while blocking.

#include <runrun/c_api.h>
#include <pybind11/pybind11.h>

#include <array>
#include <cstddef>
#include <string>
#include <vector>

namespace runrun::python {

// What an op borrows, kept alive by its handle until the op completed: up to three objects in
// place (the fast path's runtime and its input's and output's owners; null slots are unused),
// or keep_alive_of's tuple of any number in the first slot.
using KeepAlive = std::array<pybind11::object, 3>;

class Handle {
 public:
  // Takes ownership of `handle`; `keep_alive` holds the borrowed tensors and the runtime;
  // `name` is a str (the op's tensor name, the first of a group). Held as Python objects in
  // place, not as a std::string and a vector: the per-tensor enqueue then allocates nothing for
  // them (issue 12, point 6).
  Handle(runrun_handle* handle, std::string op, pybind11::object name, KeepAlive keep_alive);
  ~Handle();
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;

  // True once the op finished (successfully or not). Never blocks.
  bool poll();
  // Blocks (GIL released, no spinning) until done or `timeout_seconds` passed (< 0: no limit).
  // Returns false on timeout; raises the op's error when it failed. Checks for Ctrl-C while
  // waiting.
  bool wait(double timeout_seconds);
  // Waits without limit, then returns the op's result (finish(self) once, or `result`); raises
  // the op's error once, later calls return None. Drops the C handle and the borrowed tensors
  // as soon as the op is over.
  pybind11::object synchronize(const pybind11::object& self);
  // What synchronize() returns: `result`, or finish(self) when `finish` is not None.
  void set_result(pybind11::object result, pybind11::object finish);
  const pybind11::object& result() const { return result_; }
  std::string repr() const;
  // Outputs the runtime allocated, as "dltensor" capsules (`index` of a grouped op).
  pybind11::capsule take_output(std::size_t index);
  std::vector<int64_t> received_splits();
  int32_t join_result();

  const std::string& op() const { return op_; }
  const pybind11::object& name() const { return name_; }

 private:
  void raise_if_failed(runrun_status status);
  // Releases the C handle and the borrowed tensors, or parks them when the op still runs (an
  // interrupted wait, a dropped handle).
  void release();
  runrun_handle* require_handle(const char* what) const;
  // "allreduce 'w'" for messages.
  std::string describe() const;

  runrun_handle* handle_;
  std::string op_;
  pybind11::object name_;
  KeepAlive keep_alive_;
  bool done_ = false;
  bool synchronized_ = false;
  pybind11::object result_;
  pybind11::object finish_;
};

// A new runrun._core.Handle owning `handle` (handle_type.cc: a plain CPython type embedding the
// Handle, so that creating one per op is cheap). Throws pybind11::error_already_set when out of
// memory (the op is then parked with `keep_alive`, as a dropped handle's).
pybind11::object new_handle_object(runrun_handle* handle, std::string op, pybind11::object name,
                                   KeepAlive keep_alive, pybind11::object result = {},
                                   pybind11::object finish = {});

// `objects` as a KeepAlive: one tuple (null objects become None), untracked by the cyclic GC
// as the handle holding it is.
KeepAlive keep_alive_of(std::vector<pybind11::object> objects);
// The non-null objects of `keep_alive`, for adopt_orphaned_op.
std::vector<pybind11::object> parked(KeepAlive keep_alive);

// Whether `obj` is exactly a runrun._core.Handle (no subclass: there is none).
bool is_handle_object(PyObject* obj);
// handle.wait() of such an object, without a method lookup: its result, or nullptr with the
// op's error set.
PyObject* wait_handle_object(PyObject* handle);

// Adds the type runrun._core.Handle to `m`.
void bind_handle(pybind11::module_& m);

}  // namespace runrun::python
