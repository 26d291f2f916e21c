// Built without the XLA FFI header (jax was not installed when CMake configured): no native
// target; runrun.jax uses its io_callback path (xla_ffi.h).
#include "csrc/xla_ffi.h"

namespace runrun::python {

void bind_xla_ffi(pybind11::module_&) {}

}  // namespace runrun::python
