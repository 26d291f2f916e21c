#include "common/data_type.h"

#include "common/errors.h"

namespace runrun {

size_t element_size(DataType type) {
  switch (type) {
    case DataType::kUInt8:
    case DataType::kInt8:
    case DataType::kBool:
      return 1;
    case DataType::kInt16:
    case DataType::kFloat16:
    case DataType::kBFloat16:
      return 2;
    case DataType::kInt32:
    case DataType::kFloat32:
      return 4;
    case DataType::kInt64:
    case DataType::kFloat64:
      return 8;
  }
  throw InternalError(RUNRUN_WHERE, "unknown data type " + std::to_string(static_cast<int>(type)));
}

std::string_view data_type_name(DataType type) {
  switch (type) {
    case DataType::kUInt8:
      return "uint8";
    case DataType::kInt8:
      return "int8";
    case DataType::kInt16:
      return "int16";
    case DataType::kInt32:
      return "int32";
    case DataType::kInt64:
      return "int64";
    case DataType::kFloat16:
      return "float16";
    case DataType::kBFloat16:
      return "bfloat16";
    case DataType::kFloat32:
      return "float32";
    case DataType::kFloat64:
      return "float64";
    case DataType::kBool:
      return "bool";
  }
  return "unknown";
}

bool is_floating_point(DataType type) {
  return type == DataType::kFloat16 || type == DataType::kBFloat16 || type == DataType::kFloat32 ||
         type == DataType::kFloat64;
}

DataType data_type_from_int(int value) {
  if (value < 0 || value >= kNumDataTypes) {
    throw InvalidArgumentError(RUNRUN_WHERE, "unknown data type code " + std::to_string(value) +
                                                 ": use one of uint8, int8, int16, int32, "
                                                 "int64, float16, bfloat16, float32, float64, "
                                                 "bool");
  }
  return static_cast<DataType>(value);
}

}  // namespace runrun
