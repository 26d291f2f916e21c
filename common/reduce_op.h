#pragma once
// Why: the reductions a collective can apply. Average is not a backend reduction: the core turns
// it into Sum followed by a division, so backends and kernels only see Sum/Min/Max/Product.
// Adasum is not one either: the core runs it as its own algorithm over a backend's alltoallv
// and allgatherv (ops/adasum/adasum_allreduce.h), for allreduce of floating-point tensors.
// The codes are Horovod's (horovod/common/message.h), so a script that passes a number means
// the same op.
// Thread-safety: plain values and pure functions.

#include <cstdint>
#include <string_view>

namespace runrun {

enum class ReduceOp : int32_t {
  kAverage = 0,
  kSum = 1,
  kAdasum = 2,
  kMin = 3,
  kMax = 4,
  kProduct = 5,
};

std::string_view reduce_op_name(ReduceOp op);

// Throws InvalidArgumentError for values outside the enum.
ReduceOp reduce_op_from_int(int value);

}  // namespace runrun
