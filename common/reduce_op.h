#pragma once
// Why: the reductions a collective can apply. Average is not a backend reduction: the core turns
// it into Sum followed by a division, so backends and kernels only see Sum/Min/Max/Product.
// Thread-safety: plain values and pure functions.

#include <cstdint>
#include <string_view>

namespace runrun {

enum class ReduceOp : int32_t {
  kAverage = 0,
  kSum = 1,
  kMin = 2,
  kMax = 3,
  kProduct = 4,
};

std::string_view reduce_op_name(ReduceOp op);

// Throws InvalidArgumentError for values outside the enum.
ReduceOp reduce_op_from_int(int value);

}  // namespace runrun
