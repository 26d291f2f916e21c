#pragma once
// Why: the few things the core does to tensor memory itself — copy into and out of the fusion
// buffer, zero a joined rank's contribution, prescale/postscale, divide for an average — depend
// on where that memory is: a plain loop on the CPU, a kernel on a stream on a GPU. The core
// asks device_ops_for(tensor's device) and never touches tensor bytes directly, so a GPU data
// path adds an implementation here (ops/cuda/, with the NCCL backend) instead of branching in
// the executor. Today only the CPU implementation exists (ops/cpu/cpu_device_ops.cc).
//
// Ordering: an implementation's calls are complete (or, on a GPU, ordered on the stream the
// device's backend uses) before the next collective of that device starts, so the executor can
// call them around collectives without synchronizing itself.
// Threading contract: implementations are stateless singletons; any thread may call them on
// buffers it owns.

#include <dlpack/dlpack.h>

#include <cstddef>
#include <cstdint>

#include "common/data_type.h"

namespace runrun {

class DeviceOps {
 public:
  virtual ~DeviceOps() = default;

  virtual DLDevice device() const = 0;
  // `bytes` bytes from `src` to `dst`, both on this device, not overlapping.
  virtual void copy(void* dst, const void* src, size_t bytes) const = 0;
  virtual void zero(void* dst, size_t bytes) const = 0;
  // buffer[i] *= factor / buffer[i] /= divisor, with cpu::scale_buffer / cpu::divide_buffer's
  // semantics for every dtype (integers rounded and clamped, resp. truncated; bool refused).
  virtual void scale(void* buffer, size_t count, DataType type, double factor) const = 0;
  virtual void divide(void* buffer, size_t count, DataType type, int64_t divisor) const = 0;
};

// The operations for memory on `device` (canonical_device applied: pinned host memory is cpu).
// Throws UnsupportedError naming the device when this build has none for it.
const DeviceOps& device_ops_for(DLDevice device);

}  // namespace runrun
