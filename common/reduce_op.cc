#include "common/reduce_op.h"

#include <string>

#include "common/errors.h"

namespace runrun {

std::string_view reduce_op_name(ReduceOp op) {
  switch (op) {
    case ReduceOp::kAverage: return "average";
    case ReduceOp::kSum: return "sum";
    case ReduceOp::kMin: return "min";
    case ReduceOp::kMax: return "max";
    case ReduceOp::kProduct: return "product";
  }
  return "unknown";
}

ReduceOp reduce_op_from_int(int value) {
  constexpr int kAdasum = 2;  // Horovod's code for Adasum
  if (value == kAdasum) {
    throw UnsupportedError(RUNRUN_WHERE, "reduce op code 2 is Horovod's Adasum, which runrun "
                                         "does not implement: use average");
  }
  if (value < 0 || value > static_cast<int>(ReduceOp::kProduct)) {
    throw InvalidArgumentError(RUNRUN_WHERE, "unknown reduce op code " + std::to_string(value) +
                                                 ": use average (0), sum (1), min (3), max (4) "
                                                 "or product (5)");
  }
  return static_cast<ReduceOp>(value);
}

}  // namespace runrun
