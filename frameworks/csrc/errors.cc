#include "csrc/errors.h"

#include <pybind11/pybind11.h>

#include <string>

namespace py = pybind11;

namespace runrun::python {
namespace {

// Looks the class up on each failure (rare) instead of caching a Python object in a static,
// which would outlive the interpreter.
py::object exception_class(runrun_status status) {
  py::module_ exceptions = py::module_::import("runrun.common.exceptions");
  return exceptions.attr("exception_for_status")(static_cast<int>(status));
}

}  // namespace

void raise_status(runrun_status status, const char* message) {
  py::object cls = exception_class(status);
  PyErr_SetString(cls.ptr(), message);
  throw py::error_already_set();
}

void check_status(runrun_status status, const char* what) {
  if (status == RUNRUN_OK) return;
  std::string message = runrun_last_error();
  if (message.empty()) {
    message = std::string(what) + " failed with status " + std::to_string(status) +
              " and no message from the runtime";
  }
  raise_status(status, message.c_str());
}

}  // namespace runrun::python
