#include "csrc/orphaned_ops.h"

#include <algorithm>
#include <utility>

namespace py = pybind11;

namespace runrun::python {
namespace {

struct OrphanedOp {
  runrun_handle* handle;
  std::vector<py::object> keep_alive;
};

// Process-wide (handles of every runtime of the process) and deliberately never destroyed: a
// static destructor would drop Python references after the interpreter finalized.
std::vector<OrphanedOp>& orphans() {
  static auto* parked = new std::vector<OrphanedOp>();
  return *parked;
}

}  // namespace

void adopt_orphaned_op(runrun_handle* handle, std::vector<py::object> keep_alive) {
  orphans().push_back(OrphanedOp{handle, std::move(keep_alive)});
}

void reap_orphaned_ops() {
  std::vector<OrphanedOp>& parked = orphans();
  if (parked.empty()) return;
  // Move the finished ones out first: releasing a Python object may run arbitrary code (a
  // tensor's finalizer) that enqueues or drops another handle and so re-enters this function.
  std::vector<OrphanedOp> finished;
  auto still_running = std::stable_partition(parked.begin(), parked.end(), [](OrphanedOp& op) {
    return runrun_handle_poll(op.handle) == RUNRUN_IN_PROGRESS;
  });
  std::move(still_running, parked.end(), std::back_inserter(finished));
  parked.erase(still_running, parked.end());
  for (OrphanedOp& op : finished) runrun_handle_release(op.handle);
  finished.clear();  // drops the borrowed tensors
}

std::size_t orphaned_op_count() { return orphans().size(); }

}  // namespace runrun::python
