#pragma once
// Why: DeviceOps for host memory: memcpy/memset and the ops/cpu kernels (reduce_kernels.h),
// which hold the one definition of every dtype's scaling and division.
// Threading contract: stateless; any thread.

#include "ops/device_ops.h"

namespace runrun::cpu {

class CpuDeviceOps final : public DeviceOps {
 public:
  DLDevice device() const override;
  void copy(void* dst, const void* src, size_t bytes) const override;
  void zero(void* dst, size_t bytes) const override;
  void scale(void* buffer, size_t count, DataType type, double factor) const override;
  void divide(void* buffer, size_t count, DataType type, int64_t divisor) const override;
};

const CpuDeviceOps& cpu_device_ops();

}  // namespace runrun::cpu
