#include "ops/cuda/cuda_device_ops.h"

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "common/errors.h"
#include "ops/cuda/cuda_runtime_library.h"
#include "ops/cuda_streams.h"
#include "ops/device.h"

namespace runrun::gpu {

DLDevice CudaDeviceOps::device() const { return {kDLCUDA, device_}; }

void CudaDeviceOps::copy(void* dst, const void* src, size_t bytes) const {
  if (bytes == 0) return;
  DeviceGuard guard(device_);
  copy_async(dst, src, bytes, runrun_stream(device_), device_);
}

void CudaDeviceOps::zero(void* dst, size_t bytes) const {
  if (bytes == 0) return;
  DeviceGuard guard(device_);
  check_cuda(cuda_runtime().memset_async(dst, 0, bytes, runrun_stream(device_)), "cudaMemsetAsync",
             device_);
}

namespace {
[[noreturn]] void no_device_arithmetic(const char* what, int device) {
  throw UnsupportedError(RUNRUN_WHERE,
                         std::string(what) + " of memory on cuda:" + std::to_string(device) +
                             " is not done on the device (runrun has no kernels of its own): "
                             "over MPI/Gloo CUDA tensors are staged to host memory and scaled "
                             "there; this is a bug if you see it");
}
}  // namespace

void CudaDeviceOps::scale(void*, size_t, DataType, double) const {
  no_device_arithmetic("scaling", device_);
}

void CudaDeviceOps::divide(void*, size_t, DataType, int64_t) const {
  no_device_arithmetic("the average's division", device_);
}

const CudaDeviceOps& cuda_device_ops(int device) {
  cuda_runtime();  // throws what the search found when there is no CUDA runtime
  static std::mutex mutex;
  static std::map<int, std::unique_ptr<CudaDeviceOps>> ops;
  std::lock_guard<std::mutex> lock(mutex);
  auto& slot = ops[device];
  if (!slot) slot = std::make_unique<CudaDeviceOps>(device);
  return *slot;
}

}  // namespace runrun::gpu
