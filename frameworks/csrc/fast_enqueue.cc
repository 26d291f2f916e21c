#include "csrc/fast_enqueue.h"

#include <dlpack/dlpack.h>
#include <runrun/c_api.h>
#include <runrun/dlpack_rules.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "csrc/errors.h"
#include "csrc/fast_call.h"
#include "csrc/guarded_call.h"
#include "csrc/handle.h"
#include "csrc/host_buffers.h"
#include "csrc/runtime.h"

namespace py = pybind11;

namespace runrun::python {
namespace {

// A tensor the fast path can pass on: what owns its memory (its capsule, or the memoryview of
// its buffer) and a copy of its DLTensor (borrowing shape from the owner).
struct Exported {
  py::object owner;
  DLTensor view{};
  bool ok = false;
  const DLTensor* tensor() const { return ok ? &view : nullptr; }
};

// False when obj.__dlpack_device__() names a device other than the host (any error cleared:
// then __dlpack__() decides). Only for what the buffer protocol could not read.
bool on_host(PyObject* obj) {
  PyObject* device = PyObject_CallMethod(obj, "__dlpack_device__", nullptr);
  if (device == nullptr) {
    PyErr_Clear();
    return true;
  }
  const bool host = !PyTuple_Check(device) || PyTuple_GET_SIZE(device) < 1 ||
                    PyLong_AsLong(PyTuple_GET_ITEM(device, 0)) == kDLCPU;
  PyErr_Clear();
  Py_DECREF(device);
  return host;
}

// obj.__dlpack__() through the vectorcall method protocol with an interned name: no method
// object and no name string per call (PyObject_CallMethod made both, ~1,300 instructions).
PyObject* call_dlpack(PyObject* obj) {
  static PyObject* const name = PyUnicode_InternFromString("__dlpack__");
  if (name == nullptr) return nullptr;
  return PyObject_CallMethodNoArgs(obj, name);
}

// Exports `obj` with `exporter` and checks it; !ok means "take the general path" (any Python
// error raised on the way is cleared). `exporter`: None calls obj.__dlpack__(); the memoryview
// type reads obj's buffer (host_buffers.h; `writable` for an in-place op), falling back to
// __dlpack__ (out of place only) for what the buffer protocol cannot describe (bfloat16);
// else exporter(obj).
Exported export_tensor(PyObject* obj, PyObject* exporter, bool writable) {
  Exported out;
  if (exporter == reinterpret_cast<PyObject*>(&PyMemoryView_Type)) {
    BufferView buffer;
    if (buffer_view(obj, writable, buffer)) {
      out.owner = std::move(buffer.owner);
      out.view = buffer.view;
      out.ok = true;
      return out;
    }
    // In place needs a writable buffer; an immutable tensor (TF, JAX) goes to the general
    // path, whose checks refuse it, instead of being written through its DLPack export.
    if (writable) return out;
    // A tensor on a device (a CUDA jax.Array has no host buffer) takes the general path, which
    // hands its stream over; asked before __dlpack__(), which would wait on the host for it.
    if (!on_host(obj)) return out;
    exporter = Py_None;
  }
  PyObject* capsule = exporter == Py_None ? call_dlpack(obj) : PyObject_CallOneArg(exporter, obj);
  if (capsule == nullptr) {
    PyErr_Clear();
    return out;
  }
  out.owner = py::reinterpret_steal<py::object>(capsule);
  if (!PyCapsule_CheckExact(capsule) || !PyCapsule_IsValid(capsule, "dltensor")) return out;
  auto* managed = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule, "dltensor"));
  if (managed == nullptr) {
    PyErr_Clear();
    return out;
  }
  const DLTensor& t = managed->dl_tensor;
  // The rules of runrun/dlpack_rules.h; a device tensor takes the general path.
  if (t.device.device_type != kDLCPU || !dlpack_rules::accepted_dtype(t.dtype) ||
      !dlpack_rules::contiguous(t)) {
    return out;
  }
  out.view = t;
  out.ok = true;
  return out;
}

// `name` as UTF-8 without embedded NULs; false (any error cleared) when it is not such a str.
bool utf8_name(PyObject* name, const char*& utf8, Py_ssize_t& size) {
  if (!PyUnicode_CheckExact(name)) return false;
  utf8 = PyUnicode_AsUTF8AndSize(name, &size);
  if (utf8 == nullptr || std::strlen(utf8) != static_cast<size_t>(size)) {
    PyErr_Clear();
    return false;
  }
  return true;
}

// The allreduce options of both allreduce calls; false (any error cleared) when op is not an
// int or a scale factor is not a number.
bool allreduce_options_from(PyObject* op, PyObject* prescale, PyObject* postscale,
                            int32_t process_set, runrun_allreduce_options& options) {
  if (!PyLong_Check(op)) return false;
  const long op_value = PyLong_AsLong(op);
  const double prescale_value = PyFloat_AsDouble(prescale);
  const double postscale_value = PyFloat_AsDouble(postscale);
  if (PyErr_Occurred()) {
    PyErr_Clear();
    return false;
  }
  options = runrun_allreduce_default_options();
  options.op = static_cast<runrun_reduce_op>(op_value);
  options.prescale_factor = prescale_value;
  options.postscale_factor = postscale_value;
  options.process_set = process_set;
  return true;
}

// The common arguments of both ops, converted; `ok` is false when one has an odd type.
struct Args {
  bool ok = false;
  Runtime* runtime = nullptr;
  const char* name = nullptr;
  Py_ssize_t name_size = 0;
  PyObject* name_object = nullptr;  // borrowed: the str whose UTF-8 `name` points into
  int32_t process_set = 0;
};

// The op's name from a str (false: not an exact str, or not representable as a C string).
bool name_into(PyObject* name, Args& args) {
  if (!utf8_name(name, args.name, args.name_size)) return false;
  args.name_object = name;
  return true;
}

Args common_args(PyObject* runtime, PyObject* name, PyObject* process_set) {
  Args args;
  args.runtime = runtime_of(runtime);
  if (args.runtime == nullptr) {
    try {
      args.runtime = py::handle(runtime).cast<Runtime*>();
    } catch (const py::cast_error&) {
      return args;
    }
  }
  if (!name_into(name, args)) return args;
  if (!PyLong_CheckExact(process_set)) return args;
  long id = PyLong_AsLong(process_set);
  if (id == -1 && PyErr_Occurred()) {
    PyErr_Clear();
    return args;
  }
  args.process_set = static_cast<int32_t>(id);
  args.ok = args.process_set == id;
  return args;
}

// Exports the input, then the output: none when in place (allocate is None), a host buffer
// allocated here when allocate is True (result: its capsule, host_buffers.h), else
// allocate(tensor), exported. Returns false for "take the general path".
bool export_both(PyObject* tensor, PyObject* allocate, PyObject* exporter, Exported& in,
                 Exported& out, py::object& result) {
  in = export_tensor(tensor, exporter, allocate == Py_None);
  if (!in.ok) return false;
  if (allocate == Py_None) {  // out stays empty: output_of() is the input
    result = py::reinterpret_borrow<py::object>(tensor);
    return true;
  }
  if (allocate == Py_True) {
    const DLTensor* t = nullptr;
    out.owner = new_host_output(in.view, &t);
    out.view = *t;
    out.ok = true;
    result = out.owner;
    return true;
  }
  PyObject* output = PyObject_CallOneArg(allocate, tensor);
  if (output == nullptr) {
    PyErr_Clear();
    return false;
  }
  result = py::reinterpret_steal<py::object>(output);
  out = export_tensor(output, exporter, true);
  return out.ok;
}

// The output export_both made: the input itself when in place.
const DLTensor* output_of(const Exported& in, const Exported& out) {
  return out.ok ? out.tensor() : in.tensor();
}

PyObject* handle_of(runrun_status status, runrun_handle* handle, const char* op, const Args& args,
                    PyObject* runtime, Exported& in, Exported& out, py::object result,
                    PyObject* finish) {
  check_status(status, op);
  KeepAlive keep_alive{py::reinterpret_borrow<py::object>(runtime), std::move(in.owner),
                       std::move(out.owner)};
  return new_handle_object(handle, op, py::reinterpret_borrow<py::object>(args.name_object),
                           std::move(keep_alive), std::move(result),
                           py::reinterpret_borrow<py::object>(finish))
      .release()
      .ptr();
}

// fast_allreduce(runtime, tensor, allocate, name, op, prescale, postscale, process_set,
//                export, finish) -> Handle or None
PyObject* fast_allreduce(PyObject*, PyObject* const* a, Py_ssize_t nargs) {
  if (nargs != 10) {
    PyErr_SetString(PyExc_TypeError, "fast_allreduce takes 10 positional arguments");
    return nullptr;
  }
  return guarded([&]() -> PyObject* {
    Args args = common_args(a[0], a[3], a[7]);
    runrun_allreduce_options options;
    if (!args.ok || !allreduce_options_from(a[4], a[5], a[6], args.process_set, options)) {
      Py_RETURN_NONE;
    }
    Exported in, out;
    py::object result;
    if (!export_both(a[1], a[2], a[8], in, out, result)) Py_RETURN_NONE;
    runrun_handle* handle = nullptr;
    runrun_status status = runrun_allreduce(args.runtime->get(), args.name, in.tensor(),
                                            output_of(in, out), &options, &handle);
    return handle_of(status, handle, "allreduce", args, a[0], in, out, std::move(result), a[9]);
  });
}

// fast_broadcast(runtime, tensor, allocate, name, root_rank, process_set, export, finish)
//   -> Handle or None
PyObject* fast_broadcast(PyObject*, PyObject* const* a, Py_ssize_t nargs) {
  if (nargs != 8) {
    PyErr_SetString(PyExc_TypeError, "fast_broadcast takes 8 positional arguments");
    return nullptr;
  }
  return guarded([&]() -> PyObject* {
    Args args = common_args(a[0], a[3], a[5]);
    if (!args.ok || !PyLong_CheckExact(a[4])) Py_RETURN_NONE;
    long root = PyLong_AsLong(a[4]);
    if (PyErr_Occurred() || root != static_cast<int32_t>(root)) {
      PyErr_Clear();
      Py_RETURN_NONE;
    }
    Exported in, out;
    py::object result;
    if (!export_both(a[1], a[2], a[6], in, out, result)) Py_RETURN_NONE;
    runrun_handle* handle = nullptr;
    runrun_status status =
        runrun_broadcast(args.runtime->get(), args.name, in.tensor(), output_of(in, out),
                         static_cast<int32_t>(root), args.process_set, &handle);
    return handle_of(status, handle, "broadcast", args, a[0], in, out, std::move(result), a[7]);
  });
}

// What fast_allreduce_call and fast_broadcast_call answer for arguments the Python layer must
// resolve first (fast_call.h): NotImplemented, where None means "the general path, no retry".
PyObject* not_resolved() { Py_RETURN_NOTIMPLEMENTED; }

}  // namespace

PyObject* allreduce_call(PyObject* const* a) {
  return guarded([&]() -> PyObject* {
    Args args;
    int32_t op = 0;
    bool in_place = false;
    if (a[3] != Py_None || !reduce_op_of(a[5], op) || !in_place_of(a[9], in_place) ||
        !name_into(a[4], args) || !process_set_id_of(a[8], args.process_set)) {
      return not_resolved();
    }
    args.runtime = runtime_of(a[0]);
    const double prescale = PyFloat_AsDouble(a[6]);
    const double postscale = PyFloat_AsDouble(a[7]);
    if (PyErr_Occurred()) {
      PyErr_Clear();
      return not_resolved();
    }
    AdapterMembers members;
    if (args.runtime == nullptr || !adapter_members(a[1], in_place, members)) {
      return not_resolved();
    }
    runrun_allreduce_options options = runrun_allreduce_default_options();
    options.op = static_cast<runrun_reduce_op>(op);
    options.prescale_factor = prescale;
    options.postscale_factor = postscale;
    options.process_set = args.process_set;
    Exported in, out;
    py::object result;
    if (!export_both(a[2], members.allocate.ptr(), members.exporter.ptr(), in, out, result)) {
      Py_RETURN_NONE;
    }
    runrun_handle* handle = nullptr;
    runrun_status status = runrun_allreduce(args.runtime->get(), args.name, in.tensor(),
                                            output_of(in, out), &options, &handle);
    return handle_of(status, handle, "allreduce", args, a[0], in, out, std::move(result),
                     members.finish.ptr());
  });
}

namespace {

// fast_allreduce_call(runtime, adapter, tensor, average, name, op, prescale, postscale,
//                     process_set, in_place) -> Handle, None or NotImplemented
// runrun.common.collectives.allreduce's own arguments, after `runtime`: the whole call in one C
// function. None: the tensor is not the fast path's (the general path takes it, with the
// adapter's checks); NotImplemented: an argument the Python layer resolves first (fast_call.h).
PyObject* fast_allreduce_call(PyObject*, PyObject* const* a, Py_ssize_t nargs) {
  if (nargs != 10) {
    PyErr_SetString(PyExc_TypeError, "fast_allreduce_call takes 10 positional arguments");
    return nullptr;
  }
  return allreduce_call(a);
}

// fast_broadcast_call(runtime, adapter, tensor, root_rank, name, process_set, in_place)
//   -> Handle, None or NotImplemented (as fast_allreduce_call)
PyObject* fast_broadcast_call(PyObject*, PyObject* const* a, Py_ssize_t nargs) {
  if (nargs != 7) {
    PyErr_SetString(PyExc_TypeError, "fast_broadcast_call takes 7 positional arguments");
    return nullptr;
  }
  return guarded([&]() -> PyObject* {
    Args args;
    bool in_place = false;
    if (!in_place_of(a[6], in_place) || !name_into(a[4], args) ||
        !process_set_id_of(a[5], args.process_set)) {
      return not_resolved();
    }
    args.runtime = runtime_of(a[0]);
    AdapterMembers members;
    if (args.runtime == nullptr || !adapter_members(a[1], in_place, members)) {
      return not_resolved();
    }
    // root_rank as fast_broadcast takes it: an exact int; anything else is the general path's.
    if (!PyLong_CheckExact(a[3])) Py_RETURN_NONE;
    long root = PyLong_AsLong(a[3]);
    if (PyErr_Occurred() || root != static_cast<int32_t>(root)) {
      PyErr_Clear();
      Py_RETURN_NONE;
    }
    Exported in, out;
    py::object result;
    if (!export_both(a[2], members.allocate.ptr(), members.exporter.ptr(), in, out, result)) {
      Py_RETURN_NONE;
    }
    runrun_handle* handle = nullptr;
    runrun_status status =
        runrun_broadcast(args.runtime->get(), args.name, in.tensor(), output_of(in, out),
                         static_cast<int32_t>(root), args.process_set, &handle);
    return handle_of(status, handle, "broadcast", args, a[0], in, out, std::move(result),
                     members.finish.ptr());
  });
}

// fast_grouped_allreduce(runtime, tensors, allocate, names, op, prescale, postscale,
//                        process_set, export, finish) -> Handle (result: the list of outputs,
// or finish(handle) when finish is not None) or None.
// One export and check per tensor and one enqueue for the whole group.
PyObject* fast_grouped_allreduce(PyObject*, PyObject* const* a, Py_ssize_t nargs) {
  if (nargs != 10) {
    PyErr_SetString(PyExc_TypeError, "fast_grouped_allreduce takes 10 positional arguments");
    return nullptr;
  }
  return guarded([&]() -> PyObject* {
    PyObject* tensors = a[1];
    PyObject* names = a[3];
    if (!PyList_CheckExact(tensors) || !PyList_CheckExact(names) ||
        PyList_GET_SIZE(tensors) != PyList_GET_SIZE(names) || PyList_GET_SIZE(names) == 0) {
      Py_RETURN_NONE;
    }
    Args args = common_args(a[0], PyList_GET_ITEM(names, 0), a[7]);
    runrun_allreduce_options options;
    if (!args.ok || !allreduce_options_from(a[4], a[5], a[6], args.process_set, options)) {
      Py_RETURN_NONE;
    }
    const Py_ssize_t n = PyList_GET_SIZE(names);
    std::vector<const char*> c_names(n);
    std::vector<DLTensor> in_views(n), out_views(n);
    std::vector<const DLTensor*> inputs(n), outputs(n);
    std::vector<py::object> keep_alive{py::reinterpret_borrow<py::object>(a[0])};
    keep_alive.reserve(2 * n + 1);
    py::list results(n);
    for (Py_ssize_t i = 0; i < n; ++i) {
      Py_ssize_t size = 0;
      if (!utf8_name(PyList_GET_ITEM(names, i), c_names[i], size)) Py_RETURN_NONE;
      Exported in, out;
      py::object result;
      if (!export_both(PyList_GET_ITEM(tensors, i), a[2], a[8], in, out, result)) {
        Py_RETURN_NONE;
      }
      // Copies that outlive this iteration's Exported (the enqueue reads them below).
      in_views[i] = in.view;
      out_views[i] = out.ok ? out.view : in.view;
      inputs[i] = &in_views[i];
      outputs[i] = &out_views[i];
      results[i] = std::move(result);
      keep_alive.push_back(std::move(in.owner));
      if (out.owner) keep_alive.push_back(std::move(out.owner));
    }
    runrun_handle* handle = nullptr;
    runrun_status status =
        runrun_grouped_allreduce(args.runtime->get(), c_names.data(), inputs.data(), outputs.data(),
                                 static_cast<size_t>(n), &options, &handle);
    check_status(status, "grouped_allreduce");
    return new_handle_object(handle, "grouped_allreduce",
                             py::reinterpret_borrow<py::object>(args.name_object),
                             keep_alive_of(std::move(keep_alive)), std::move(results),
                             py::reinterpret_borrow<py::object>(a[9]))
        .release()
        .ptr();
  });
}

PyMethodDef kMethods[] = {
    {"fast_allreduce", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(fast_allreduce)),
     METH_FASTCALL,
     "fast_allreduce(runtime, tensor, allocate, name, op, prescale, postscale, process_set, "
     "export, finish): enqueues an allreduce of a framework tensor (in place when allocate is "
     "None; into a host buffer allocated here, a capsule, when allocate is True); returns a "
     "Handle, or None when the general path must take the call."},
    {"fast_broadcast", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(fast_broadcast)),
     METH_FASTCALL,
     "fast_broadcast(runtime, tensor, allocate, name, root_rank, process_set, export, finish): "
     "as fast_allreduce, for a broadcast."},
    {"fast_allreduce_call",
     reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(fast_allreduce_call)),
     METH_FASTCALL,
     "fast_allreduce_call(runtime, adapter, tensor, average, name, op, prescale, postscale, "
     "process_set, in_place): runrun.common.collectives.allreduce's arguments in one call; "
     "returns a Handle, None (the general path takes the tensor) or NotImplemented (the Python "
     "layer resolves an argument first)."},
    {"fast_broadcast_call",
     reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(fast_broadcast_call)),
     METH_FASTCALL,
     "fast_broadcast_call(runtime, adapter, tensor, root_rank, name, process_set, in_place): "
     "as fast_allreduce_call, for a broadcast."},
    {"fast_grouped_allreduce",
     reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(fast_grouped_allreduce)),
     METH_FASTCALL,
     "fast_grouped_allreduce(runtime, tensors, allocate, names, op, prescale, postscale, "
     "process_set, export, finish): one allreduce of a list of tensors (lists only); returns a "
     "Handle whose result is the list of outputs, or None when the general path must take the "
     "call."},
    {nullptr, nullptr, 0, nullptr}};

}  // namespace

void bind_fast_enqueue(py::module_& m) {
  bind_fast_call(m);
  for (PyMethodDef* def = kMethods; def->ml_name != nullptr; ++def) {
    PyObject* fn = PyCFunction_NewEx(def, nullptr, m.attr("__name__").ptr());
    if (fn == nullptr) throw py::error_already_set();
    m.add_object(def->ml_name, py::reinterpret_steal<py::object>(fn));
  }
}

}  // namespace runrun::python
