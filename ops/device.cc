#include "ops/device.h"

namespace runrun {

DLDevice canonical_device(DLDevice device) {
  switch (device.device_type) {
    case kDLCPU:
    case kDLCUDAHost:
    case kDLROCMHost:
      return kCpuDevice;
    default:
      return device;
  }
}

bool same_device(DLDevice a, DLDevice b) {
  return a.device_type == b.device_type && a.device_id == b.device_id;
}

bool is_cpu(DLDevice device) { return canonical_device(device).device_type == kDLCPU; }

std::string device_string(DLDevice device) {
  const std::string id = std::to_string(device.device_id);
  switch (device.device_type) {
    case kDLCPU:
      return "cpu";
    case kDLCUDA:
      return "cuda:" + id;
    case kDLCUDAHost:
      return "cuda_host:" + id;
    case kDLOpenCL:
      return "opencl:" + id;
    case kDLVulkan:
      return "vulkan:" + id;
    case kDLMetal:
      return "metal:" + id;
    case kDLVPI:
      return "vpi:" + id;
    case kDLROCM:
      return "rocm:" + id;
    case kDLROCMHost:
      return "rocm_host:" + id;
    case kDLExtDev:
      return "ext_dev:" + id;
    case kDLCUDAManaged:
      return "cuda_managed:" + id;
    default:
      return "device type " + std::to_string(static_cast<int>(device.device_type)) + ":" + id;
  }
}

}  // namespace runrun
