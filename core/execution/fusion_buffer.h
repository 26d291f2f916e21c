#pragma once
// Why: fused tensors are copied into one persistent buffer, reduced with one collective and
// copied back. The buffer is allocated once, on first use, and grows only up to the fusion
// threshold, so steady-state steps allocate nothing.
// Thread-safety: owned by one background thread.

#include <cstddef>
#include <memory>

#include "core/runtime/tensor.h"

namespace runrun {

class FusionBuffer {
 public:
  // At least `bytes` of 64-byte aligned memory, valid until the next call.
  std::byte* get(size_t bytes);
  size_t capacity() const { return capacity_; }

 private:
  AlignedBytes data_;
  size_t capacity_ = 0;
};

}  // namespace runrun
