#include "csrc/bound_call.h"

#include <array>
#include <cstddef>
#include <string_view>

#include "csrc/fast_enqueue.h"
#include "csrc/handle.h"

namespace py = pybind11;

namespace runrun::python {
namespace {

// allreduce_call's argument slots (fast_enqueue.h): 0 is the runtime, the rest are named.
constexpr int kSlots = 10;
constexpr std::array<const char*, kSlots> kSlotNames = {
    "",   "adapter",         "tensor",           "average",     "name",
    "op", "prescale_factor", "postscale_factor", "process_set", "in_place"};

enum class Kind { kAllreduce, kWait };

struct BoundCall {
  PyObject_HEAD vectorcallfunc vectorcall;
  PyObject* dict;          // functools.update_wrapper's attributes
  PyObject* fallback;      // the Python function this object stands in for
  PyObject* general;       // kAllreduce: the general path, called with the bound slots
  PyObject* runtime_dict;  // the runtime module's __dict__ (kAllreduce)
  PyObject* names;         // tuple: the fallback's parameter names, interned (kAllreduce)
  PyObject* initial;       // tuple of kSlots: defaults and fixed values, None where required
  int params;              // the fallback's positional parameters
  std::array<int, kSlots> slot_of{};    // parameter index -> slot
  std::array<bool, kSlots> required{};  // slot has no default (a missing argument: fallback)
};

BoundCall* of(PyObject* self) { return reinterpret_cast<BoundCall*>(self); }

PyObject* call_fallback(BoundCall* self, PyObject* const* args, size_t nargsf, PyObject* kwnames) {
  return PyObject_Vectorcall(self->fallback, args, nargsf, kwnames);
}

// The parameter index of keyword `key` at or after `first`, or -1.
int parameter_of(BoundCall* self, PyObject* key, int first) {
  PyObject* const* names = &PyTuple_GET_ITEM(self->names, 0);
  for (int i = first; i < self->params; ++i) {
    if (names[i] == key) return i;  // keywords of a call are interned, as are our names
  }
  for (int i = first; i < self->params; ++i) {
    if (PyUnicode_Compare(names[i], key) == 0) return i;
  }
  PyErr_Clear();
  return -1;
}

PyObject* allreduce_vectorcall(PyObject* obj, PyObject* const* args, size_t nargsf,
                               PyObject* kwnames) {
  BoundCall* self = of(obj);
  const Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
  const Py_ssize_t nkw = kwnames == nullptr ? 0 : PyTuple_GET_SIZE(kwnames);
  if (nargs > self->params) return call_fallback(self, args, nargsf, kwnames);
  std::array<PyObject*, kSlots> a;
  PyObject* const* initial = &PyTuple_GET_ITEM(self->initial, 0);
  for (int s = 0; s < kSlots; ++s) a[s] = initial[s];
  std::array<bool, kSlots> given{};
  for (Py_ssize_t i = 0; i < nargs; ++i) {
    a[self->slot_of[i]] = args[i];
    given[self->slot_of[i]] = true;
  }
  for (Py_ssize_t k = 0; k < nkw; ++k) {
    const int i = parameter_of(self, PyTuple_GET_ITEM(kwnames, k), static_cast<int>(nargs));
    if (i < 0) return call_fallback(self, args, nargsf, kwnames);  // its TypeError
    a[self->slot_of[i]] = args[nargs + k];
    given[self->slot_of[i]] = true;
  }
  for (int s = 1; s < kSlots; ++s) {
    if (self->required[s] && !given[s]) return call_fallback(self, args, nargsf, kwnames);
  }
  static PyObject* const runtime_key = PyUnicode_InternFromString("_runtime");
  PyObject* runtime = runtime_key == nullptr
                          ? nullptr
                          : PyDict_GetItemWithError(self->runtime_dict, runtime_key);  // borrowed
  if (runtime == nullptr && PyErr_Occurred()) return nullptr;
  if (runtime == nullptr || runtime == Py_None) {
    return call_fallback(self, args, nargsf, kwnames);  // not initialized: its error
  }
  a[0] = runtime;
  PyObject* handle = allreduce_call(a.data());
  if (handle == nullptr) return nullptr;  // the enqueue's own error, raised as the function would
  if (handle == Py_NotImplemented) {      // an argument the function resolves first
    Py_DECREF(handle);
    return call_fallback(self, args, nargsf, kwnames);
  }
  if (handle != Py_None) return handle;
  // A tensor the fast path does not take (on a GPU, not contiguous...): the general path, with
  // the arguments as bound (the function would end there too, after trying the fast path again).
  Py_DECREF(handle);
  return PyObject_Vectorcall(self->general, a.data() + 1, kSlots - 1, nullptr);
}

PyObject* wait_vectorcall(PyObject* obj, PyObject* const* args, size_t nargsf, PyObject* kwnames) {
  if (PyVectorcall_NARGS(nargsf) == 1 && kwnames == nullptr && is_handle_object(args[0])) {
    return wait_handle_object(args[0]);
  }
  return call_fallback(of(obj), args, nargsf, kwnames);
}

int traverse(PyObject* obj, visitproc visit, void* arg) {
  BoundCall* self = of(obj);
  Py_VISIT(self->dict);
  Py_VISIT(self->fallback);
  Py_VISIT(self->general);
  Py_VISIT(self->runtime_dict);
  Py_VISIT(self->names);
  Py_VISIT(self->initial);
  return 0;
}

int clear(PyObject* obj) {
  BoundCall* self = of(obj);
  Py_CLEAR(self->dict);
  Py_CLEAR(self->fallback);
  Py_CLEAR(self->general);
  Py_CLEAR(self->runtime_dict);
  Py_CLEAR(self->names);
  Py_CLEAR(self->initial);
  return 0;
}

void dealloc(PyObject* obj) {
  PyObject_GC_UnTrack(obj);
  clear(obj);
  Py_TYPE(obj)->tp_free(obj);
}

PyObject* repr(PyObject* obj) {
  return PyUnicode_FromFormat("<runrun bound call of %R>", of(obj)->fallback);
}

// As a class attribute it stays itself, as a builtin function does (no self is bound); being a
// descriptor also makes inspect.isroutine() true, so help() documents it as a function, with
// the signature of __wrapped__.
PyObject* descr_get(PyObject* obj, PyObject*, PyObject*) {
  Py_INCREF(obj);
  return obj;
}

// Pickled by reference, as the function it stands for: its module's attribute of that name.
PyObject* reduce(PyObject* obj, PyObject*) {
  return PyObject_GetAttrString(of(obj)->fallback, "__qualname__");
}

PyMethodDef kMethods[] = {
    {"__reduce__", reduce, METH_NOARGS, "Pickled as the function it stands for."},
    {nullptr, nullptr, 0, nullptr}};

PyGetSetDef kGetSet[] = {
    {"__dict__", PyObject_GenericGetDict, PyObject_GenericSetDict, nullptr, nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr}};

PyTypeObject* bound_call_type() {
  static PyTypeObject type = [] {
    PyTypeObject t{};
    Py_SET_REFCNT(&t, 1);
    t.tp_name = "runrun._core.BoundCall";
    t.tp_basicsize = sizeof(BoundCall);
    t.tp_dealloc = dealloc;
    t.tp_repr = repr;
    t.tp_call = PyVectorcall_Call;
    t.tp_vectorcall_offset = offsetof(BoundCall, vectorcall);
    t.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL;
    t.tp_doc = "A runrun function with its per-call path in C (csrc/bound_call.h).";
    t.tp_traverse = traverse;
    t.tp_clear = clear;
    t.tp_dictoffset = offsetof(BoundCall, dict);
    t.tp_methods = kMethods;
    t.tp_getset = kGetSet;
    t.tp_descr_get = descr_get;
    return t;
  }();
  return &type;
}

BoundCall* new_bound_call(Kind kind, PyObject* fallback) {
  BoundCall* self = PyObject_GC_New(BoundCall, bound_call_type());
  if (self == nullptr) return nullptr;
  self->vectorcall = kind == Kind::kWait ? wait_vectorcall : allreduce_vectorcall;
  self->dict = nullptr;
  Py_INCREF(fallback);
  self->fallback = fallback;
  self->general = nullptr;
  self->runtime_dict = nullptr;
  self->names = nullptr;
  self->initial = nullptr;
  self->params = 0;
  self->slot_of.fill(0);
  self->required.fill(false);
  PyObject_GC_Track(reinterpret_cast<PyObject*>(self));
  return self;
}

int slot_named(const char* name) {
  for (int s = 1; s < kSlots; ++s) {
    if (std::string_view(kSlotNames[s]) == name) return s;
  }
  return -1;
}

// Fills the parameter table of `self` from the fallback's code object, its defaults and
// `fixed`; false with a TypeError naming what does not fit.
bool bind_parameters(BoundCall* self, PyObject* fixed) {
  py::object code =
      py::reinterpret_steal<py::object>(PyObject_GetAttrString(self->fallback, "__code__"));
  if (!code) return false;
  const int argcount = code.attr("co_argcount").cast<int>();
  const int flags = code.attr("co_flags").cast<int>();
  const int kwonly = code.attr("co_kwonlyargcount").cast<int>();
  constexpr int kVarArgs = 0x04, kVarKeywords = 0x08;
  if ((flags & (kVarArgs | kVarKeywords)) != 0 || kwonly != 0 || argcount >= kSlots) {
    PyErr_SetString(PyExc_TypeError,
                    "bound_allreduce: the fallback must take named positional parameters only");
    return false;
  }
  py::tuple varnames = code.attr("co_varnames");
  py::object defaults_object =
      py::reinterpret_borrow<py::object>(self->fallback).attr("__defaults__");
  py::tuple defaults = defaults_object.is_none() ? py::tuple() : py::tuple(defaults_object);
  const int first_default = argcount - static_cast<int>(defaults.size());
  std::array<PyObject*, kSlots> initial{};
  std::array<bool, kSlots> covered{};
  py::tuple names(argcount);
  for (int i = 0; i < argcount; ++i) {
    py::str name = varnames[static_cast<size_t>(i)];
    const int slot = slot_named(name.cast<std::string>().c_str());
    if (slot < 0) {
      PyErr_Format(PyExc_TypeError, "bound_allreduce: unknown parameter %R", name.ptr());
      return false;
    }
    self->slot_of[i] = slot;
    covered[slot] = true;
    if (i >= first_default) {
      initial[slot] = defaults[static_cast<size_t>(i - first_default)].ptr();
    } else {
      self->required[slot] = true;
    }
    PyObject* interned = name.release().ptr();
    PyUnicode_InternInPlace(&interned);
    PyTuple_SET_ITEM(names.ptr(), i, interned);
  }
  PyObject* key = nullptr;
  PyObject* value = nullptr;
  Py_ssize_t pos = 0;
  while (PyDict_Next(fixed, &pos, &key, &value)) {
    const int slot = PyUnicode_Check(key) ? slot_named(PyUnicode_AsUTF8(key)) : -1;
    if (slot < 0 || covered[slot]) {
      PyErr_Format(PyExc_TypeError, "bound_allreduce: cannot fix %R", key);
      return false;
    }
    initial[slot] = value;
    covered[slot] = true;
  }
  for (int s = 1; s < kSlots; ++s) {
    if (!covered[s]) {
      PyErr_Format(PyExc_TypeError, "bound_allreduce: nothing gives %s", kSlotNames[s]);
      return false;
    }
  }
  py::tuple initial_tuple(kSlots);
  for (int s = 0; s < kSlots; ++s) {
    PyObject* item = initial[s] != nullptr ? initial[s] : Py_None;
    Py_INCREF(item);
    PyTuple_SET_ITEM(initial_tuple.ptr(), s, item);
  }
  self->params = argcount;
  self->names = names.release().ptr();
  self->initial = initial_tuple.release().ptr();
  return true;
}

// bound_allreduce(fallback, general, fixed, runtime_module)
PyObject* bound_allreduce(PyObject*, PyObject* const* a, Py_ssize_t nargs) {
  if (nargs != 4 || !PyFunction_Check(a[0]) || !PyCallable_Check(a[1]) || !PyDict_Check(a[2]) ||
      !PyModule_Check(a[3])) {
    PyErr_SetString(PyExc_TypeError,
                    "bound_allreduce takes (function, general path, dict of fixed arguments, "
                    "module)");
    return nullptr;
  }
  PyObject* obj = reinterpret_cast<PyObject*>(new_bound_call(Kind::kAllreduce, a[0]));
  if (obj == nullptr) return nullptr;
  try {
    if (!bind_parameters(of(obj), a[2])) {
      Py_DECREF(obj);
      return nullptr;
    }
  } catch (py::error_already_set& e) {
    e.restore();
    Py_DECREF(obj);
    return nullptr;
  }
  PyObject* module_dict = PyModule_GetDict(a[3]);  // borrowed
  Py_INCREF(module_dict);
  of(obj)->runtime_dict = module_dict;
  Py_INCREF(a[1]);
  of(obj)->general = a[1];
  return obj;
}

// bound_wait(fallback)
PyObject* bound_wait(PyObject*, PyObject* fallback) {
  if (!PyCallable_Check(fallback)) {
    PyErr_SetString(PyExc_TypeError, "bound_wait takes a function");
    return nullptr;
  }
  return reinterpret_cast<PyObject*>(new_bound_call(Kind::kWait, fallback));
}

PyMethodDef kFunctions[] = {
    {"bound_allreduce",
     reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(bound_allreduce)), METH_FASTCALL,
     "bound_allreduce(fallback, general, fixed, runtime_module): a C callable standing in for "
     "the allreduce function `fallback` (csrc/bound_call.h)."},
    {"bound_wait", bound_wait, METH_O,
     "bound_wait(fallback): synchronize(handle) in C for runrun._core.Handle, else fallback."},
    {nullptr, nullptr, 0, nullptr}};

}  // namespace

void bind_bound_calls(py::module_& m) {
  PyTypeObject* type = bound_call_type();
  if (PyType_Ready(type) < 0) throw py::error_already_set();
  for (PyMethodDef* def = kFunctions; def->ml_name != nullptr; ++def) {
    PyObject* fn = PyCFunction_NewEx(def, nullptr, m.attr("__name__").ptr());
    if (fn == nullptr) throw py::error_already_set();
    m.add_object(def->ml_name, py::reinterpret_steal<py::object>(fn));
  }
}

}  // namespace runrun::python
