#include "common/reduce_op.h"

#include <string>

#include "common/errors.h"

namespace runrun {

std::string_view reduce_op_name(ReduceOp op) {
  switch (op) {
    case ReduceOp::kAverage:
      return "average";
    case ReduceOp::kSum:
      return "sum";
    case ReduceOp::kAdasum:
      return "adasum";
    case ReduceOp::kMin:
      return "min";
    case ReduceOp::kMax:
      return "max";
    case ReduceOp::kProduct:
      return "product";
  }
  return "unknown";
}

ReduceOp reduce_op_from_int(int value) {
  if (value < 0 || value > static_cast<int>(ReduceOp::kProduct)) {
    throw InvalidArgumentError(RUNRUN_WHERE, "unknown reduce op code " + std::to_string(value) +
                                                 ": use average (0), sum (1), adasum (2), min (3), "
                                                 "max (4) or product (5)");
  }
  return static_cast<ReduceOp>(value);
}

}  // namespace runrun
