#pragma once
// Why: runrun.jax's native path inside jax.jit. Each collective of a jitted function lowers to an
// XLA custom call whose handler (xla_ffi_handler.cc) enqueues the op through the C API and waits
// for it on the XLA thread, instead of a Python callback per op (docs/jax.md, "Inside jax.jit").
// The handler is written against the XLA FFI C API header only (xla/ffi/api/c_api.h, a versioned
// C ABI shipped in jaxlib/include): no framework library is linked, so one build serves every
// jaxlib whose FFI major version matches. It is compiled only when CMake found that header
// (RUNRUN_HAVE_XLA_FFI); without it runrun.jax keeps its io_callback path.
//
// The handler needs the process's runtime, which Python creates and destroys (init, shutdown,
// elastic re-init): Runtime attaches it here when created and detaches it before destroying it.
// Threading: attach/detach from any thread; detach waits until no handler uses the runtime (the
// caller shuts it down first, so that every op in flight completes).

#include <runrun/c_api.h>
#include <pybind11/pybind11.h>

namespace runrun::python {

void xla_ffi_attach(runrun_runtime* rt);
void xla_ffi_detach(runrun_runtime* rt);

// Adds _core.xla_ffi (a dict: target name -> handler capsule, header version) and
// _core.xla_ffi_forget(set_id) when the handler is built; nothing otherwise.
void bind_xla_ffi(pybind11::module_& m);

}  // namespace runrun::python
