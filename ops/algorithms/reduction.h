#pragma once
// Why: the algorithms combine buffers without knowing element types: a reduction is an element
// size and a function `into = into (op) from`, element-wise. A backend builds one from its
// DataType and ReduceOp (cpu/reduce_kernels.h), the control channel from its words.
// Thread-safety: a value; `combine` must be callable from the rank's thread.

#include <cstddef>
#include <functional>

namespace runrun::algorithms {

struct Reduction {
  size_t element_size;
  std::function<void(void* into, const void* from, size_t count)> combine;
};

}  // namespace runrun::algorithms
