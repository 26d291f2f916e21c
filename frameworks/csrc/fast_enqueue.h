#pragma once
// Why: the per-tensor hot path from Python to the queue (issue 12, point 6). A backward pass
// enqueues one allreduce per gradient, so every microsecond per call counts ~100 times per step.
// fast_allreduce / fast_broadcast (and fast_grouped_allreduce, a list in one enqueue) take the
// framework's tensor object itself, export it through the adapter's DLPack function (or
// __dlpack__, or the buffer protocol when the adapter passes the memoryview type), check in C++
// what the adapters' Python checks check (a supported dtype, CPU memory, a contiguous layout),
// enqueue and return one Handle carrying the result: one Python call and one Python object per
// op, no pybind11 dispatch. An out-of-place output comes from the adapter's allocate(tensor),
// or, when allocate is True, is allocated here like the input (host_buffers.h): the handle's
// result is then a "dltensor" capsule that the adapter's finish turns into its tensor.
// They return None instead of raising for anything they cannot take (an argument of an odd
// type, a tensor the adapter's own checks would refuse or must first copy): the caller then
// takes the general path (runrun.common.collectives), whose checks raise the adapter's usual
// exception and message. Errors of the enqueue itself (a name already in flight, an unknown
// process set...) are raised as the general path raises them.
// Threading: called with the GIL held; enqueueing never blocks.

#include <pybind11/pybind11.h>

namespace runrun::python {

// fast_allreduce_call / fast_broadcast_call take runrun.common.collectives' allreduce and
// broadcast arguments as they are (the adapter, op, name, process set, in_place: the whole call,
// resolved in C, fast_call.h) and answer NotImplemented for what the Python layer must
// resolve first (it then calls fast_allreduce / fast_broadcast with resolved arguments).
// fast_allreduce_call's body: `a` holds its 10 arguments (runtime, adapter, tensor, average,
// name, op, prescale, postscale, process_set, in_place). A new reference: a Handle, None or
// NotImplemented; nullptr with a Python error set when the enqueue itself failed.
PyObject* allreduce_call(PyObject* const* a);

// Adds fast_allreduce, fast_broadcast, fast_grouped_allreduce, fast_allreduce_call,
// fast_broadcast_call and fast_call_setup to the module (signatures in fast_enqueue.cc); call
// after bind_runtime.
void bind_fast_enqueue(pybind11::module_& m);

}  // namespace runrun::python
