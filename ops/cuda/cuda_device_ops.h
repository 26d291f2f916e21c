#pragma once
// Why: DeviceOps (ops/device_ops.h) for CUDA memory: copies and zeroing are enqueued on runrun's
// stream of the device (ops/cuda_streams.h), so they are ordered before the collective that follows
// them on that stream, and the host never waits for them here. Scaling and the average's
// division need arithmetic on the device, which runrun does without kernels of its own: the
// NCCL backend will use NCCL's average and pre-multiplied sum; CUDA tensors over a host backend
// are staged to host memory first (core/execution/device_staging.h) and scaled there. So scale()
// and
// divide() throw UnsupportedError.
// Threading contract: one immutable object per device; any thread.

#include "ops/device_ops.h"

namespace runrun::gpu {

class CudaDeviceOps final : public DeviceOps {
 public:
  explicit CudaDeviceOps(int device) : device_(device) {}
  DLDevice device() const override;
  void copy(void* dst, const void* src, size_t bytes) const override;
  void zero(void* dst, size_t bytes) const override;
  void scale(void* buffer, size_t count, DataType type, double factor) const override;
  void divide(void* buffer, size_t count, DataType type, int64_t divisor) const override;

 private:
  int device_;
};

// The operations of cuda:<device>; throws UnsupportedError with the library search's result when
// no CUDA runtime was found.
const CudaDeviceOps& cuda_device_ops(int device);

}  // namespace runrun::gpu
