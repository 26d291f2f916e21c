#pragma once
// Why: the extension's raw CPython entry points (METH_FASTCALL functions, the Handle type's
// methods) are called without pybind11's dispatch, so none of its exception translation runs:
// each wraps its body in guarded(), which turns a C++ exception into the Python error it stands
// for and returns nullptr, as CPython expects of a failed call.
// Threading: call with the GIL held (the Python error is set on this thread).

#include <pybind11/pybind11.h>

#include <exception>
#include <new>

namespace runrun::python {

template <typename Body>
PyObject* guarded(Body&& body) {
  try {
    return body();
  } catch (pybind11::error_already_set& e) {
    e.restore();
  } catch (const pybind11::builtin_exception& e) {
    e.set_error();
  } catch (const std::bad_alloc&) {
    PyErr_NoMemory();
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
  }
  return nullptr;
}

}  // namespace runrun::python
