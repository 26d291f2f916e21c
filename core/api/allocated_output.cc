#include "core/api/allocated_output.h"

#include "core/execution/device_staging.h"
#include "core/api/enqueue_checks.h"
#include "ops/cuda_streams.h"

namespace runrun {

OwnedTensor allocate_output_like(OpType op, const std::string& name, int rank,
                                 const TensorView& input) {
  check_tensor(op, name, rank, input, "input");
  if (input.device.device_type != kDLCUDA) return OwnedTensor::allocate(input.dtype, input.shape);
  OwnedTensor like;
  like.dtype = input.dtype;
  like.shape = input.shape;
  const int device = input.device.device_id;
  gpu::DeviceGuard guard(device);  // the legacy default stream allocates on the current device
  const gpu::cuda_abi::Stream stream = gpu::framework_stream();
  return allocate_on_device(like, device, stream, stream);
}

}  // namespace runrun
