#include "ops/nccl/nccl_types.h"

#include <cstring>

#include "common/errors.h"
#include "ops/cpu/half.h"

namespace runrun::gpu {

std::optional<nccl_abi::DataType> nccl_reduce_type(DataType type, ReduceOp op) {
  switch (type) {
    case DataType::kUInt8:
      return nccl_abi::kUint8;
    case DataType::kInt8:
      return nccl_abi::kInt8;
    case DataType::kInt32:
      return nccl_abi::kInt32;
    case DataType::kInt64:
      return nccl_abi::kInt64;
    case DataType::kFloat16:
      return nccl_abi::kFloat16;
    case DataType::kBFloat16:
      return nccl_abi::kBfloat16;
    case DataType::kFloat32:
      return nccl_abi::kFloat32;
    case DataType::kFloat64:
      return nccl_abi::kFloat64;
    case DataType::kBool:  // 0/1 bytes: min, max and product stay 0/1; a sum would not
      if (op == ReduceOp::kSum || op == ReduceOp::kAverage) return std::nullopt;
      return nccl_abi::kUint8;
    case DataType::kInt16:
      return std::nullopt;
  }
  return std::nullopt;
}

nccl_abi::RedOp nccl_op(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum:
      return nccl_abi::kSum;
    case ReduceOp::kProduct:
      return nccl_abi::kProd;
    case ReduceOp::kMin:
      return nccl_abi::kMin;
    case ReduceOp::kMax:
      return nccl_abi::kMax;
    case ReduceOp::kAverage:
    case ReduceOp::kAdasum:
      break;
  }
  throw InternalError(RUNRUN_WHERE,
                      "nccl_op: average is ncclAvg or a pre-multiplied sum; "
                      "Adasum never reaches NCCL");
}

std::vector<unsigned char> nccl_scalar(double factor, DataType type) {
  std::vector<unsigned char> bytes;
  auto put = [&bytes](const auto value) {
    bytes.resize(sizeof(value));
    std::memcpy(bytes.data(), &value, sizeof(value));
  };
  switch (type) {
    case DataType::kFloat16:
      put(cpu::float_to_half(static_cast<float>(factor)));
      break;
    case DataType::kBFloat16:
      put(cpu::float_to_bfloat16(static_cast<float>(factor)));
      break;
    case DataType::kFloat32:
      put(static_cast<float>(factor));
      break;
    case DataType::kFloat64:
      put(factor);
      break;
    default:
      throw InternalError(RUNRUN_WHERE, "nccl_scalar: a factor of " +
                                            std::string(data_type_name(type)) +
                                            " is not applied by NCCL (can_scale said no)");
  }
  return bytes;
}

}  // namespace runrun::gpu
