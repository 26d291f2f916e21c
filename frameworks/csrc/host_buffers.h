#pragma once
// Why: the two cheapest ways the fast path (fast_enqueue.h) has to reach a TensorFlow or JAX
// tensor's memory and to give an immutable framework an output (issue 12, point 6):
// - buffer_view: an input read through the buffer protocol (memoryview), which TF's
//   EagerTensor and jax.Array both implement on CPU at ~0.6 us, against 3-7 us for
//   jax.Array.__dlpack__ (jax blocks until the array is ready either way);
// - new_host_output: an out-of-place output allocated here, like the input (dtype, shape,
//   contiguous, 64-byte aligned as TF's kernels require), as a "dltensor" capsule, with no
//   Python call at enqueue; the adapter turns it into its framework's tensor when the handle is
//   waited (tf.experimental.dlpack.from_dlpack adopts it without a copy).
// Threading: call with the GIL held.

#include <dlpack/dlpack.h>
#include <pybind11/pybind11.h>

namespace runrun::python {

// A tensor read through the buffer protocol: `view` borrows from `owner` (a capsule holding
// the exporter's buffer, released with it) and is valid while `owner` lives.
struct BufferView {
  pybind11::object owner;
  DLTensor view{};
};

// Fills `out` from `obj`'s buffer (C-contiguous, a dtype the runtime takes, writable when
// `writable`); false (any Python error cleared) when `obj` has no such buffer.
bool buffer_view(PyObject* obj, bool writable, BufferView& out);

// A new "dltensor" capsule owning a host buffer with `like`'s dtype and shape (contiguous,
// 64-byte aligned, uninitialized; reused from freed outputs, output_blocks.h); `*tensor` points
// at its DLTensor, valid while the capsule was not consumed. Throws std::bad_alloc.
pybind11::object new_host_output(const DLTensor& like, const DLTensor** tensor);

}  // namespace runrun::python
