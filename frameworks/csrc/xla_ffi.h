#pragma once
// Why: runrun.jax's native path inside jax.jit. Each collective of a jitted function lowers to an
// XLA custom call whose handler (xla_ffi_targets.h) enqueues the op through the C API and waits
// for it on the XLA thread, instead of a Python callback per op (docs/jax.md, "Inside jax.jit").
// The handlers are written against the XLA FFI C API header only (xla/ffi/api/c_api.h, a
// versioned C ABI shipped in jaxlib/include): no framework library is linked, so one build
// serves every jaxlib whose FFI major version matches. They are compiled only when CMake found
// that header (xla_ffi_bind.cc; xla_ffi_bind_none.cc otherwise); without it runrun.jax keeps
// its io_callback path.
// This header is the Python side: what the module exposes of them.
// Threading: called once, at import, with the GIL.

#include <pybind11/pybind11.h>

namespace runrun::python {

// Adds _core.xla_ffi (a dict: target names -> handler capsules per platform, header version),
// _core.xla_ffi_forget(set_id) and runrun --profile's record access (xla_ffi_profile.h) when the
// handlers are built; nothing otherwise.
void bind_xla_ffi(pybind11::module_& m);

}  // namespace runrun::python
