#include "core/tensor.h"

namespace runrun {

size_t num_elements(const std::vector<int64_t>& shape) {
  size_t n = 1;
  for (int64_t d : shape) n *= static_cast<size_t>(d);
  return n;
}

AlignedBytes allocate_aligned(size_t bytes) {
  // Never a zero-sized allocation: a valid pointer keeps DLPack consumers happy.
  return AlignedBytes(static_cast<std::byte*>(::operator new[](bytes ? bytes : 1,
                                                               std::align_val_t(64))));
}

OwnedTensor OwnedTensor::allocate(DataType dtype, std::vector<int64_t> shape) {
  OwnedTensor t;
  t.dtype = dtype;
  t.shape = std::move(shape);
  size_t bytes = t.num_bytes();
  t.storage = allocate_aligned(bytes);
  return t;
}

}  // namespace runrun
