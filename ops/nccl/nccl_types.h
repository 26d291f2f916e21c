#pragma once
// Why: runrun's data types and reduce ops in NCCL's terms, and what NCCL cannot do without a
// kernel of runrun's own (int16, a sum of bools, a fractional factor of an integer type): those
// ops go through staging instead (docs/gpu.md "How CUDA tensors are moved").
// Thread-safety: pure functions.

#include <optional>
#include <vector>

#include "common/data_type.h"
#include "common/reduce_op.h"
#include "ops/nccl/nccl_abi.h"

namespace runrun::gpu {

// NCCL's type for reducing `type` with `op`; nullopt when NCCL has none that gives runrun's
// result (int16; bool except min/max/product, which are uint8's on 0/1 bytes).
std::optional<nccl_abi::DataType> nccl_reduce_type(DataType type, ReduceOp op);

// NCCL's op for `op` (never kAverage: the caller asks for ncclAvg explicitly).
nccl_abi::RedOp nccl_op(ReduceOp op);

// `factor` as a host scalar of `type`, for ncclRedOpCreatePreMulSum; only floating types (an
// integer factor would wrap where runrun's host scaling clamps).
std::vector<unsigned char> nccl_scalar(double factor, DataType type);

}  // namespace runrun::gpu
