// Why: runrun._core.Handle as a plain CPython type that embeds the Handle. Every enqueued op
// creates one, so it must be cheap: one pymalloc allocation and a placement construction, where a
// pybind11 class instance also registered the object in pybind11's instance map and dispatched
// each method call through its overload machinery (issue 12 point 6). Not tracked by the cyclic
// GC (as before); weak references are supported.
// Threading: every slot runs with the GIL held; Handle::wait releases it while blocking.

#include <pybind11/pybind11.h>

#include <cstddef>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "csrc/guarded_call.h"
#include "csrc/handle.h"
#include "csrc/orphaned_ops.h"

namespace py = pybind11;

namespace runrun::python {
namespace {

// Standard layout (for offsetof); the Handle lives in `storage`, built by placement new.
struct HandleObject {
  PyObject_HEAD PyObject* weakrefs;
  alignas(Handle) unsigned char storage[sizeof(Handle)];
};

PyTypeObject* handle_type = nullptr;

Handle& of(PyObject* self) {
  return *std::launder(reinterpret_cast<Handle*>(reinterpret_cast<HandleObject*>(self)->storage));
}

PyObject* new_ref(const py::object& o) {
  return o ? o.inc_ref().ptr() : (Py_INCREF(Py_None), Py_None);
}

void dealloc(PyObject* self) {
  auto* obj = reinterpret_cast<HandleObject*>(self);
  if (obj->weakrefs != nullptr) PyObject_ClearWeakRefs(self);
  of(self).~Handle();
  Py_TYPE(self)->tp_free(self);
}

PyObject* poll(PyObject* self, PyObject*) {
  return guarded([&] { return PyBool_FromLong(of(self).poll()); });
}

PyObject* wait(PyObject* self, PyObject*) {
  return guarded([&] {
    return of(self).synchronize(py::reinterpret_borrow<py::object>(self)).release().ptr();
  });
}

PyObject* wait_for(PyObject* self, PyObject* args, PyObject* kwargs) {
  static const char* keywords[] = {"timeout", nullptr};
  double timeout = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "d:wait_for", const_cast<char**>(keywords),
                                   &timeout)) {
    return nullptr;
  }
  return guarded([&] { return PyBool_FromLong(of(self).wait(timeout)); });
}

PyObject* set_result(PyObject* self, PyObject* args, PyObject* kwargs) {
  static const char* keywords[] = {"result", "finish", nullptr};
  PyObject* result = nullptr;
  PyObject* finish = nullptr;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO:set_result", const_cast<char**>(keywords),
                                   &result, &finish)) {
    return nullptr;
  }
  return guarded([&] {
    of(self).set_result(py::reinterpret_borrow<py::object>(result),
                        py::reinterpret_borrow<py::object>(finish));
    Py_RETURN_NONE;
  });
}

PyObject* take_output(PyObject* self, PyObject* args, PyObject* kwargs) {
  static const char* keywords[] = {"index", nullptr};
  Py_ssize_t index = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|n:take_output", const_cast<char**>(keywords),
                                   &index)) {
    return nullptr;
  }
  if (index < 0) {
    PyErr_SetString(PyExc_ValueError, "take_output: index must be >= 0");
    return nullptr;
  }
  return guarded(
      [&] { return of(self).take_output(static_cast<std::size_t>(index)).release().ptr(); });
}

PyObject* received_splits(PyObject* self, PyObject*) {
  return guarded([&] {
    std::vector<int64_t> splits = of(self).received_splits();
    py::list out(splits.size());
    for (std::size_t i = 0; i < splits.size(); ++i) out[i] = py::int_(splits[i]);
    return out.release().ptr();
  });
}

PyObject* join_result(PyObject* self, PyObject*) {
  return guarded([&] { return PyLong_FromLong(of(self).join_result()); });
}

PyObject* repr(PyObject* self) {
  return guarded([&] {
    std::string text = of(self).repr();
    return PyUnicode_FromStringAndSize(text.data(), static_cast<Py_ssize_t>(text.size()));
  });
}

PyObject* get_result(PyObject* self, void*) { return new_ref(of(self).result()); }

PyObject* get_op(PyObject* self, void*) {
  const std::string& s = of(self).op();
  return PyUnicode_FromStringAndSize(s.data(), static_cast<Py_ssize_t>(s.size()));
}

PyObject* get_name(PyObject* self, void*) { return new_ref(of(self).name()); }

template <typename F>
PyCFunction cfunc(F f) {
  return reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(f));
}

PyMethodDef kMethods[] = {
    {"poll", cfunc(poll), METH_NOARGS, "True once the op finished; never blocks."},
    {"wait", cfunc(wait), METH_NOARGS,
     "Waits, then returns the op's result; raises the op's error (once per failure)."},
    {"wait_for", cfunc(wait_for), METH_VARARGS | METH_KEYWORDS,
     "wait_for(timeout): blocks until done or `timeout` seconds passed (GIL released); False on "
     "timeout; raises the op's error. Does not build the result."},
    {"set_result", cfunc(set_result), METH_VARARGS | METH_KEYWORDS,
     "set_result(result, finish): what wait() returns: `result`, or finish(handle) when finish "
     "is not None."},
    {"take_output", cfunc(take_output), METH_VARARGS | METH_KEYWORDS,
     "take_output(index=0): the output the runtime allocated, as a 'dltensor' capsule (once)."},
    {"received_splits", cfunc(received_splits), METH_NOARGS,
     "The splits an alltoall received, as a list of ints."},
    {"join_result", cfunc(join_result), METH_NOARGS, "The last rank to join (join)."},
    {nullptr, nullptr, 0, nullptr}};

PyGetSetDef kGetSet[] = {
    {"result", get_result, nullptr, "What wait() returns once set (None before).", nullptr},
    {"op", get_op, nullptr, "The op's kind (allreduce, ...).", nullptr},
    {"name", get_name, nullptr, "The op's tensor name (the first of a group).", nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr}};

}  // namespace

py::object new_handle_object(runrun_handle* handle, std::string op, py::object name,
                             KeepAlive keep_alive, py::object result, py::object finish) {
  PyObject* self = handle_type->tp_alloc(handle_type, 0);
  if (self == nullptr) {  // the op was enqueued: park it with what it borrows
    adopt_orphaned_op(handle, parked(std::move(keep_alive)));
    throw py::error_already_set();
  }
  auto* obj = reinterpret_cast<HandleObject*>(self);
  obj->weakrefs = nullptr;
  new (obj->storage) Handle(handle, std::move(op), std::move(name), std::move(keep_alive));
  of(self).set_result(std::move(result), std::move(finish));
  return py::reinterpret_steal<py::object>(self);
}

KeepAlive keep_alive_of(std::vector<py::object> objects) {
  py::tuple tuple(objects.size());
  for (size_t i = 0; i < objects.size(); ++i) {
    PyObject* item = objects[i] ? objects[i].release().ptr() : py::none().release().ptr();
    PyTuple_SET_ITEM(tuple.ptr(), static_cast<Py_ssize_t>(i), item);
  }
  if (PyObject_GC_IsTracked(tuple.ptr())) PyObject_GC_UnTrack(tuple.ptr());
  return KeepAlive{std::move(tuple), {}, {}};
}

std::vector<py::object> parked(KeepAlive keep_alive) {
  std::vector<py::object> objects;
  for (py::object& object : keep_alive) {
    if (object) objects.push_back(std::move(object));
  }
  return objects;
}

bool is_handle_object(PyObject* obj) {
  return handle_type != nullptr && Py_TYPE(obj) == handle_type;
}

PyObject* wait_handle_object(PyObject* handle) { return wait(handle, nullptr); }

void bind_handle(py::module_& m) {
  static PyTypeObject type = [] {
    PyTypeObject t{};
    Py_SET_REFCNT(&t, 1);
    t.tp_name = "runrun._core.Handle";
    t.tp_basicsize = sizeof(HandleObject);
    t.tp_dealloc = dealloc;
    t.tp_repr = repr;
    t.tp_flags = Py_TPFLAGS_DEFAULT;
    t.tp_doc = "One enqueued collective. Keeps its tensors alive until it completed.";
    t.tp_weaklistoffset = offsetof(HandleObject, weakrefs);
    t.tp_methods = kMethods;
    t.tp_getset = kGetSet;
    return t;
  }();
  if (PyType_Ready(&type) < 0) throw py::error_already_set();
  handle_type = &type;
  Py_INCREF(&type);
  m.add_object("Handle", py::reinterpret_borrow<py::object>(reinterpret_cast<PyObject*>(&type)));
}

}  // namespace runrun::python
