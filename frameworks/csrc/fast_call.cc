#include "csrc/fast_call.h"

#include "csrc/runtime.h"

namespace py = pybind11;

namespace runrun::python {
namespace {

PyTypeObject* runtime_type = nullptr;     // runrun._core.Runtime (bind_fast_call)
PyObject* process_set_type = nullptr;     // runrun.common.process_sets.ProcessSet (setup)
PyObject* process_set_id_name = nullptr;  // interned attribute names
PyObject* fast_members_name = nullptr;

// runrun_reduce_op's codes that ReduceOp names (ops.py, Horovod's numbers); ADASUM (2) takes
// the general path (its enqueue checks the process set's size).
constexpr long kLastReduceOp = RUNRUN_OP_PRODUCT;
constexpr long kAdasum = 2;

// A new reference to obj.<name> as the instance's own __dict__ holds it, or an empty object
// (error cleared) when it holds none. For attributes that are plain instance data (a process
// set's id, an adapter's fast members): the dict lookup skips the type's attribute search and
// costs ~60 instructions instead of ~190 per op. A class attribute or descriptor of that name
// is not seen: the caller then takes the general path.
py::object instance_attribute(PyObject* obj, PyObject* name) {
  PyObject* dict = PyObject_GenericGetDict(obj, nullptr);
  if (dict == nullptr) {
    PyErr_Clear();
    return {};
  }
  PyObject* value = PyDict_Check(dict) ? PyDict_GetItemWithError(dict, name) : nullptr;
  Py_DECREF(dict);
  if (value == nullptr) {
    PyErr_Clear();
    return {};
  }
  return py::reinterpret_borrow<py::object>(value);
}

// fast_call_setup(process_set_class)
PyObject* fast_call_setup(PyObject*, PyObject* cls) {
  if (!PyType_Check(cls)) {
    PyErr_SetString(PyExc_TypeError, "fast_call_setup takes the ProcessSet class");
    return nullptr;
  }
  Py_INCREF(cls);
  Py_XSETREF(process_set_type, cls);
  Py_RETURN_NONE;
}

PyMethodDef kSetup = {"fast_call_setup", fast_call_setup, METH_O,
                      "fast_call_setup(ProcessSet): the process set class fast_allreduce_call and "
                      "fast_broadcast_call take (runrun.common.collectives calls it once)."};

PyObject* interned(const char* text) {
  PyObject* s = PyUnicode_InternFromString(text);
  if (s == nullptr) throw py::error_already_set();
  return s;  // kept for the life of the process
}

}  // namespace

Runtime* runtime_of(PyObject* obj) {
  if (runtime_type == nullptr || Py_TYPE(obj) != runtime_type) return nullptr;
  // The exact type's instance has pybind11's simple layout: its one value and holder.
  py::detail::value_and_holder vh =
      reinterpret_cast<py::detail::instance*>(obj)->get_value_and_holder();
  if (!vh.holder_constructed()) return nullptr;  // Runtime.__new__ without __init__
  return vh.value_ptr<Runtime>();
}

bool reduce_op_of(PyObject* op, int32_t& value) {
  if (op == Py_None) {
    value = 0;  // AVERAGE
    return true;
  }
  if (!PyLong_Check(op)) return false;
  const long v = PyLong_AsLong(op);
  if (v < 0 || v > kLastReduceOp || v == kAdasum) {  // -1 also when the conversion failed
    PyErr_Clear();
    return false;
  }
  value = static_cast<int32_t>(v);
  return true;
}

bool process_set_id_of(PyObject* process_set, int32_t& id) {
  if (process_set_type == nullptr ||
      Py_TYPE(process_set) != reinterpret_cast<PyTypeObject*>(process_set_type)) {
    return false;
  }
  py::object value = instance_attribute(process_set, process_set_id_name);
  if (!value || !PyLong_CheckExact(value.ptr())) return false;  // None: not registered
  const long v = PyLong_AsLong(value.ptr());
  if (v == -1 && PyErr_Occurred()) {
    PyErr_Clear();
    return false;
  }
  id = static_cast<int32_t>(v);
  return id == v;
}

bool in_place_of(PyObject* in_place, bool& value) {
  if (in_place != Py_True && in_place != Py_False) return false;
  value = in_place == Py_True;
  return true;
}

bool adapter_members(PyObject* adapter, bool in_place, AdapterMembers& out) {
  // TensorAdapter._fast_members: (fast_allocate, fast_export, fast_finish), one lookup.
  py::object members = instance_attribute(adapter, fast_members_name);
  if (!members || !PyTuple_CheckExact(members.ptr()) || PyTuple_GET_SIZE(members.ptr()) != 3) {
    return false;
  }
  PyObject* const* m = &PyTuple_GET_ITEM(members.ptr(), 0);
  out.exporter = py::reinterpret_borrow<py::object>(m[1]);
  out.allocate = py::reinterpret_borrow<py::object>(in_place ? Py_None : m[0]);
  out.finish = py::reinterpret_borrow<py::object>(in_place ? Py_None : m[2]);
  return true;
}

void bind_fast_call(py::module_& m) {
  runtime_type = reinterpret_cast<PyTypeObject*>(py::type::of<Runtime>().ptr());
  process_set_id_name = interned("process_set_id");
  fast_members_name = interned("_fast_members");
  PyObject* fn = PyCFunction_NewEx(&kSetup, nullptr, m.attr("__name__").ptr());
  if (fn == nullptr) throw py::error_already_set();
  m.add_object(kSetup.ml_name, py::reinterpret_steal<py::object>(fn));
}

}  // namespace runrun::python
