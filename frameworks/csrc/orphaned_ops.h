#pragma once
// Why: a handle that Python drops before its op completed (an exception between enqueue and
// wait, a test that fails halfway) must not block the dropping thread: its peers may be waiting
// on something else, and a destructor that waits for them hangs the job. Yet the runtime may
// still read or write the tensors the op borrowed. So the dropped op is parked here with what it
// keeps alive, and released once it completed — every op completes, at the latest when the
// runtime shuts down. Nothing here ever waits.
// Threading: every function is called with the GIL held (it drops Python references).

#include <runrun/c_api.h>
#include <pybind11/pybind11.h>

#include <cstddef>
#include <vector>

namespace runrun::python {

// Takes `handle` (not yet complete) and the objects its op borrows; they are released by a later
// reap_orphaned_ops() that finds the op complete.
void adopt_orphaned_op(runrun_handle* handle, std::vector<pybind11::object> keep_alive);

// Releases every parked op that has completed. Cheap when nothing is parked; called whenever a
// new op is enqueued, a handle is dropped, and after the runtime shut down.
void reap_orphaned_ops();

// How many dropped ops are still running (for tests).
std::size_t orphaned_op_count();

}  // namespace runrun::python
