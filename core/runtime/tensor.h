#pragma once
// Why: how the core sees a tensor: a borrowed contiguous buffer with a dtype and a shape
// (TensorView), or a buffer the runtime allocated for an op whose output size is only known after
// negotiation (OwnedTensor, handed to the caller through the handle).
// Thread-safety: plain values; an OwnedTensor has one owner at a time.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <vector>

#include "common/data_type.h"
#include "ops/device.h"

namespace runrun {

size_t num_elements(const std::vector<int64_t>& shape);

struct TensorView {
  void* data = nullptr;
  DataType dtype = DataType::kFloat32;
  std::vector<int64_t> shape;
  // Where `data` lives (canonical_device: pinned host memory is cpu). From the DLPack tensor;
  // negotiated (ranks must agree), part of the cache signature, never fused across, and it
  // picks the DeviceOps that copy and scale the tensor.
  DLDevice device = kCpuDevice;

  size_t num_elements() const { return runrun::num_elements(shape); }
  size_t num_bytes() const { return num_elements() * element_size(dtype); }
};

// Frees what allocate_aligned returned: heap blocks, or mapped ones (mapped_bytes > 0); or, with
// `release` set, memory of another allocator (a CUDA output: core/execution/device_staging.h),
// handed to
// release(p, release_context).
struct AlignedDelete {
  size_t mapped_bytes = 0;
  void (*release)(std::byte*, void*) = nullptr;
  void* release_context = nullptr;
  void operator()(std::byte* p) const;
};
using AlignedBytes = std::unique_ptr<std::byte[], AlignedDelete>;
// Uninitialised 64-byte aligned memory (at least 1 byte). Blocks of 4 MiB and more are mapped
// with transparent huge pages: a fresh 64 MiB output otherwise costs ~16k page faults per op,
// which made allgather/alltoall up to 3.5x slower than raw MPI (docs/perf-notes/
// mpi-2026-11-21.md, "allgather / alltoall at 64 MiB").
AlignedBytes allocate_aligned(size_t bytes);

struct OwnedTensor {
  DataType dtype = DataType::kFloat32;
  std::vector<int64_t> shape;
  AlignedBytes storage;
  DLDevice device = kCpuDevice;  // where `storage` is (a CUDA output of a CUDA input)

  // Allocates (uninitialised, 64-byte aligned) storage for the shape.
  static OwnedTensor allocate(DataType dtype, std::vector<int64_t> shape);
  TensorView view() { return TensorView{storage.get(), dtype, shape, device}; }
  size_t num_bytes() const { return num_elements(shape) * element_size(dtype); }
};

}  // namespace runrun
