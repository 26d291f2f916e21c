#include "csrc/handle.h"

#include <algorithm>
#include <chrono>
#include <utility>

#include "csrc/dlpack_bridge.h"
#include "csrc/errors.h"
#include "csrc/orphaned_ops.h"

namespace py = pybind11;

namespace runrun::python {
namespace {

// Longest time one blocking wait lasts before the GIL is taken back to look for signals.
constexpr double kSignalCheckSeconds = 0.5;

}  // namespace

Handle::Handle(runrun_handle* handle, std::string op, py::object name, KeepAlive keep_alive)
    : handle_(handle),
      op_(std::move(op)),
      name_(std::move(name)),
      keep_alive_(std::move(keep_alive)) {
  reap_orphaned_ops();
}

Handle::~Handle() {
  if (handle_ == nullptr) return;
  release();
  reap_orphaned_ops();
}

std::string Handle::describe() const {
  std::string name;
  if (name_) {
    Py_ssize_t size = 0;
    const char* utf8 = PyUnicode_AsUTF8AndSize(name_.ptr(), &size);
    if (utf8 != nullptr) {
      name.assign(utf8, static_cast<size_t>(size));
    } else {
      PyErr_Clear();
    }
  }
  return op_ + " '" + name + "'";
}

runrun_handle* Handle::require_handle(const char* what) const {
  if (handle_ == nullptr) {
    std::string message = std::string(what) + " on a released handle of " + describe();
    raise_status(RUNRUN_INVALID_ARGUMENT, message.c_str());
  }
  return handle_;
}

void Handle::raise_if_failed(runrun_status status) {
  if (status == RUNRUN_OK || status == RUNRUN_IN_PROGRESS) return;
  std::string message = runrun_handle_error(handle_);
  if (message.empty()) {
    message = describe() + " failed with status " + std::to_string(status);
  }
  raise_status(status, message.c_str());
}

bool Handle::poll() {
  if (synchronized_) return true;
  runrun_status status = runrun_handle_poll(require_handle("poll"));
  if (status == RUNRUN_IN_PROGRESS) return false;
  done_ = true;
  return true;
}

void Handle::release() {
  if (handle_ == nullptr) return;
  if (!done_ && runrun_handle_poll(handle_) == RUNRUN_IN_PROGRESS) {
    // Never wait here: the peers may be waiting on something else. The runtime may still use
    // the borrowed tensors, so they stay parked with the op until it completed.
    adopt_orphaned_op(handle_, parked(std::move(keep_alive_)));
  } else {
    runrun_handle_release(handle_);
  }
  handle_ = nullptr;
  keep_alive_ = KeepAlive{};
}

void Handle::set_result(py::object result, py::object finish) {
  result_ = std::move(result);
  finish_ = finish.is_none() ? py::object() : std::move(finish);
}

py::object Handle::synchronize(const py::object& self) {
  if (synchronized_) return result_ ? result_ : py::none();
  struct Over {  // whatever happens, the op is over for Python afterwards (as Horovod's)
    Handle* h;
    ~Over() {
      h->synchronized_ = true;
      h->finish_ = py::object();
      h->release();
    }
  } over{this};
  try {
    wait(-1.0);
    if (finish_) result_ = finish_(self);
  } catch (...) {
    result_ = py::object();
    throw;
  }
  return result_ ? result_ : py::none();
}

std::string Handle::repr() const {
  if (synchronized_) return "<runrun handle done>";
  return "<runrun handle " + describe() + " pending>";
}

bool Handle::wait(double timeout_seconds) {
  runrun_handle* handle = require_handle("wait");
  // Most handles are waited for after their op completed (a backward pass's gradients): then
  // neither the GIL nor the clock is needed.
  if (runrun_status status = runrun_handle_poll(handle); status != RUNRUN_IN_PROGRESS) {
    done_ = true;
    raise_if_failed(status);
    return true;
  }
  const auto start = std::chrono::steady_clock::now();
  for (;;) {
    double slice = kSignalCheckSeconds;
    if (timeout_seconds >= 0) {
      const double elapsed =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      slice = std::max(0.0, std::min(slice, timeout_seconds - elapsed));
    }
    runrun_status status;
    {
      py::gil_scoped_release release;
      status = runrun_handle_wait(handle, slice);
    }
    if (status != RUNRUN_IN_PROGRESS) {
      done_ = true;
      raise_if_failed(status);
      return true;
    }
    if (PyErr_CheckSignals() != 0) throw py::error_already_set();
    if (timeout_seconds >= 0 && slice <= 0.0) return false;
  }
}

py::capsule Handle::take_output(std::size_t index) {
  runrun_handle* handle = require_handle("take_output");
  DLManagedTensor* managed = nullptr;
  check_status(runrun_handle_take_output_at(handle, index, &managed),
               "runrun_handle_take_output_at");
  return to_capsule(managed);
}

std::vector<int64_t> Handle::received_splits() {
  const int64_t* splits = nullptr;
  std::size_t count = 0;
  check_status(runrun_handle_received_splits(require_handle("received_splits"), &splits, &count),
               "runrun_handle_received_splits");
  return std::vector<int64_t>(splits, splits + count);
}

int32_t Handle::join_result() {
  int32_t last_rank = -1;
  check_status(runrun_handle_join_result(require_handle("join_result"), &last_rank),
               "runrun_handle_join_result");
  return last_rank;
}

}  // namespace runrun::python
