#include "core/execution/fusion_buffer.h"

#include <new>

namespace runrun {

std::byte* FusionBuffer::get(size_t bytes) {
  if (bytes > capacity_) {
    data_ = allocate_aligned(bytes);
    capacity_ = bytes;
  }
  return data_.get();
}

}  // namespace runrun
