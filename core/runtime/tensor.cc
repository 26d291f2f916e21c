#include "core/runtime/tensor.h"

#include <sys/mman.h>

#include <new>

namespace runrun {

size_t num_elements(const std::vector<int64_t>& shape) {
  size_t n = 1;
  for (int64_t d : shape) n *= static_cast<size_t>(d);
  return n;
}

namespace {
constexpr size_t kMapThreshold = size_t{4} << 20;
}  // namespace

void AlignedDelete::operator()(std::byte* p) const {
  if (release != nullptr) {
    release(p, release_context);
  } else if (mapped_bytes > 0) {
    ::munmap(p, mapped_bytes);
  } else {
    ::operator delete[](p, std::align_val_t(64));
  }
}

AlignedBytes allocate_aligned(size_t bytes) {
  if (bytes >= kMapThreshold) {
    void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    ::madvise(p, bytes, MADV_HUGEPAGE);  // best effort: THP may be off
    return AlignedBytes(static_cast<std::byte*>(p), AlignedDelete{bytes});
  }
  // Never a zero-sized allocation: a valid pointer keeps DLPack consumers happy.
  return AlignedBytes(
      static_cast<std::byte*>(::operator new[](bytes ? bytes : 1, std::align_val_t(64))));
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
