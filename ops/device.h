#pragma once
// Why: every buffer that crosses the Backend interface says where its memory lives, as a DLPack
// DLDevice (the type tensors already cross the C API in), so a backend can refuse memory it
// cannot touch instead of dereferencing a GPU pointer on the CPU, and the core can pick the
// right per-device operations (ops/device_ops.h). Today only host memory exists; a CUDA
// backend (NCCL) will accept kDLCUDA buffers through the same types.
// Thread-safety: plain values and pure functions.

#include <dlpack/dlpack.h>

#include <string>

namespace runrun {

inline constexpr DLDevice kCpuDevice{kDLCPU, 0};

// The canonical form of a device: host memory the CPU addresses directly (kDLCPU, and pinned
// kDLCUDAHost / kDLROCMHost memory) is {kDLCPU, 0}, so ranks that hand in the same kind of
// memory agree on its device however the framework labelled it; other devices are unchanged.
DLDevice canonical_device(DLDevice device);

bool same_device(DLDevice a, DLDevice b);
bool is_cpu(DLDevice device);  // host memory (after canonical_device)

// "cpu", "cuda:1", "rocm:0", ... ("device type 42:0" for unknown types), for messages.
std::string device_string(DLDevice device);

// A buffer of a collective: its address and the device its memory is on.
struct DeviceBuffer {
  void* data = nullptr;
  DLDevice device = kCpuDevice;
};

// The same for an input the collective only reads. Any DeviceBuffer converts to it.
struct ConstDeviceBuffer {
  const void* data = nullptr;
  DLDevice device = kCpuDevice;
  ConstDeviceBuffer() = default;
  ConstDeviceBuffer(const void* d, DLDevice dev) : data(d), device(dev) {}
  ConstDeviceBuffer(const DeviceBuffer& b) : data(b.data), device(b.device) {}  // NOLINT
};

inline DeviceBuffer cpu_buffer(void* data) { return {data, kCpuDevice}; }
inline ConstDeviceBuffer cpu_buffer(const void* data) { return {data, kCpuDevice}; }

}  // namespace runrun
