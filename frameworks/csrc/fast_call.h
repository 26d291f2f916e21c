#pragma once
// Why: the whole per-tensor call in one C entry (issue 12, point 6). runrun.common.collectives'
// allreduce and broadcast hand their own arguments (the adapter and Horovod's op, name,
// process_set, in_place) to the extension (fast_enqueue.h: fast_allreduce_call,
// fast_broadcast_call), which resolves here what the Python layer resolved on every call (the
// reduction op, the process set's id, the adapter's fast-path members, the Runtime object
// behind runrun._core.Runtime) for a few dozen instructions instead of ~1,500 of bytecode.
// Each resolver answers false for anything not in its plain form (an unnamed op, the
// deprecated `average`, an op that is no ReduceOp value, a process set that is no registered
// ProcessSet, a non-bool in_place, a non-adapter): the Python layer then resolves it as before,
// with its own errors, so nothing a script sees changes.
// Threading: call with the GIL held.

#include <pybind11/pybind11.h>

#include <cstdint>

namespace runrun::python {

class Runtime;

// The Runtime a runrun._core.Runtime object wraps, without pybind11's generic cast (~300
// instructions); nullptr for anything else (a subclass included: callers fall back to the cast).
Runtime* runtime_of(PyObject* obj);

// `op` as the C API's reduce op: None is Average (Horovod's default), an int (ReduceOp is an
// IntEnum) must be one of Average, Sum, Min, Max, Product. False for anything else.
bool reduce_op_of(PyObject* op, int32_t& value);

// The id of a registered runrun.common.process_sets.ProcessSet (exactly that class, as the
// Python layer's fast path requires); false for anything else, an unregistered set included.
bool process_set_id_of(PyObject* process_set, int32_t& id);

// in_place as the exact bool the Python layer passes; false for anything else.
bool in_place_of(PyObject* in_place, bool& value);

// The adapter's fast-path members (runrun.common.tensor_protocol.TensorAdapter, its
// _fast_members tuple): in place only fast_export (allocate and finish are None), else
// fast_allocate, fast_export and fast_finish. False (error cleared) when it has none.
struct AdapterMembers {
  pybind11::object allocate;
  pybind11::object exporter;
  pybind11::object finish;
};
bool adapter_members(PyObject* adapter, bool in_place, AdapterMembers& out);

// Adds fast_call_setup(ProcessSet) to the module: runrun.common.collectives names the class
// whose instances process_set_id_of takes (once, when it first loads the fast path). Also
// remembers the Runtime type for runtime_of; call after bind_runtime.
void bind_fast_call(pybind11::module_& m);

}  // namespace runrun::python
