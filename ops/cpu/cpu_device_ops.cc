#include "ops/cpu/cpu_device_ops.h"

#include <cstring>
#include <string>

#include "common/errors.h"
#include "ops/cpu/copy_bytes.h"
#include "ops/cpu/reduce_kernels.h"
#include "ops/cuda/cuda_device_ops.h"
#include "ops/cuda_streams.h"
#include "ops/device.h"

namespace runrun {
namespace cpu {

DLDevice CpuDeviceOps::device() const { return kCpuDevice; }

void CpuDeviceOps::copy(void* dst, const void* src, size_t bytes) const {
  if (bytes > 0) copy_bytes(dst, src, bytes);  // memcpy without its relative-alignment cliff
}

void CpuDeviceOps::zero(void* dst, size_t bytes) const {
  if (bytes > 0) std::memset(dst, 0, bytes);
}

void CpuDeviceOps::scale(void* buffer, size_t count, DataType type, double factor) const {
  scale_buffer(buffer, count, type, factor);
}

void CpuDeviceOps::divide(void* buffer, size_t count, DataType type, int64_t divisor) const {
  divide_buffer(buffer, count, type, divisor);
}

const CpuDeviceOps& cpu_device_ops() {
  static const CpuDeviceOps ops;
  return ops;
}

}  // namespace cpu

const DeviceOps& device_ops_for(DLDevice device) {
  if (is_cpu(device)) return cpu::cpu_device_ops();
  if (device.device_type == kDLCUDA && gpu::cuda_runtime_available()) {
    return gpu::cuda_device_ops(device.device_id);
  }
  throw UnsupportedError(RUNRUN_WHERE, "no device operations for memory on " +
                                           device_string(device) +
                                           " in this process (host memory, and CUDA memory "
                                           "once a CUDA runtime is found, docs/gpu.md); move "
                                           "the tensor to the CPU");
}

}  // namespace runrun
