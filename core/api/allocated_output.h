#pragma once
// Why: TensorFlow and JAX tensors are immutable, so an out-of-place allreduce or broadcast of
// theirs has no framework tensor to write into: the caller passes no output (NULL in the C
// API) and the runtime allocates one like the input, on the input's device, which the
// framework adopts through DLPack once the handle completed (issue 11 point 1; allgather,
// alltoall and reducescatter allocate theirs on the background thread,
// core/execution/device_staging.h).
// Host input: 64-byte aligned heap memory, as every runtime-allocated output. CUDA input:
// stream-ordered cudaMallocAsync on the calling thread's framework stream, before the producer
// event is recorded there (so runrun's stream, which waits on that event, sees the memory),
// freed by the DLPack deleter with cudaFreeAsync on that same stream, the output's consumer.
// Threading contract: call on the enqueuing thread (it reads that thread's framework stream).

#include <string>

#include "core/negotiation/message.h"
#include "core/runtime/tensor.h"

namespace runrun {

// The output of `op` for `input` (same dtype, shape and device). Checks `input` first, so a
// CUDA input without a usable CUDA runtime is refused as at enqueue (UnsupportedError naming
// the op, the tensor, the rank, the device and what the library search found).
OwnedTensor allocate_output_like(OpType op, const std::string& name, int rank,
                                 const TensorView& input);

}  // namespace runrun
