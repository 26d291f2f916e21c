#pragma once
// Why: a Python function between the script and the extension costs ~650-900 instructions per
// call (frame, argument binding, global lookups): on the per-gradient path that is a fifth of
// the whole enqueue (issue 12, point 6). A bound call is a C callable standing in for a Python
// function of the public API (runrun.torch's allreduce_async_, runrun.common's allreduce and
// synchronize): it binds the call's arguments as that function would, runs the extension's fast
// path (fast_enqueue.h) on them, and calls the Python function itself, with the call's own
// arguments, for anything the fast path does not take (an unnamed op, an odd argument, a tensor
// the adapter must check, an error to raise). So a script sees the function's behaviour, its
// errors included; functools.update_wrapper gives the object the function's name, doc and
// signature (__wrapped__).
// Threading: called with the GIL held.

#include <pybind11/pybind11.h>

namespace runrun::python {

// Adds to `m`:
//   bound_allreduce(fallback, general, fixed, runtime_module) -> callable
//     fallback: a Python function whose parameters are among runrun.common.collectives
//     allreduce's (adapter, tensor, average, name, op, prescale_factor, postscale_factor,
//     process_set, in_place; no *args, **kwargs or keyword-only ones), called as it was called
//     when an argument needs resolving (or is wrong); `fixed`: a dict giving the ones it lacks
//     (e.g. {"adapter": TORCH, "in_place": True}); general(adapter, ..., in_place): the path
//     for a tensor the fast path does not take (so that it is not exported again on the way);
//     the runtime is runtime_module._runtime at each call.
//   bound_wait(fallback) -> callable
//     synchronize(handle): handle.wait() when `handle` is a runrun._core.Handle, else
//     fallback(handle).
// Call after bind_handle and bind_fast_enqueue.
void bind_bound_calls(pybind11::module_& m);

}  // namespace runrun::python
