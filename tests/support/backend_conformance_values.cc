#include "tests/support/backend_conformance_values.h"

#include <algorithm>
#include <cstring>
#include <sstream>

#include "ops/cpu/half.h"
#include "tests/support/backend_conformance.h"

namespace runrun::conformance {

int64_t input_value(int source, size_t index, DataType type, ReduceOp op) {
  const uint64_t mix = index * 7 + static_cast<uint64_t>(source) * 13 + 5;
  if (type == DataType::kBool) return (index + static_cast<size_t>(source)) % 4 != 0 ? 1 : 0;
  if (op == ReduceOp::kProduct) {
    if (type == DataType::kUInt8) return 1 + static_cast<int64_t>(mix % 2);
    constexpr int64_t kChoices[] = {-2, -1, 1, 2};
    return kChoices[mix % 4];
  }
  if (type == DataType::kUInt8) return static_cast<int64_t>(mix % 9);
  return static_cast<int64_t>(mix % 9) - 4;
}

int64_t combine(int64_t a, int64_t b, DataType type, ReduceOp op) {
  if (type == DataType::kBool) {
    const bool either = (a != 0) || (b != 0);
    const bool both = (a != 0) && (b != 0);
    return (op == ReduceOp::kSum || op == ReduceOp::kMax) ? either : both;
  }
  switch (op) {
    case ReduceOp::kSum:
      return a + b;
    case ReduceOp::kMin:
      return std::min(a, b);
    case ReduceOp::kMax:
      return std::max(a, b);
    case ReduceOp::kProduct:
      return a * b;
    case ReduceOp::kAverage:
    case ReduceOp::kAdasum:
      break;
  }
  throw ConformanceFailure("conformance: combine called with average or adasum");
}

void store(DataType type, void* base, size_t index, int64_t value) {
  switch (type) {
    case DataType::kUInt8:
      static_cast<uint8_t*>(base)[index] = static_cast<uint8_t>(value);
      return;
    case DataType::kInt8:
      static_cast<int8_t*>(base)[index] = static_cast<int8_t>(value);
      return;
    case DataType::kInt16:
      static_cast<int16_t*>(base)[index] = static_cast<int16_t>(value);
      return;
    case DataType::kInt32:
      static_cast<int32_t*>(base)[index] = static_cast<int32_t>(value);
      return;
    case DataType::kInt64:
      static_cast<int64_t*>(base)[index] = value;
      return;
    case DataType::kFloat16:
    case DataType::kBFloat16:
    case DataType::kFloat32:
    case DataType::kFloat64:  // small integers: exact in every floating type
      return store_double(type, base, index, static_cast<double>(value));
    case DataType::kBool:
      static_cast<uint8_t*>(base)[index] = value != 0 ? 1 : 0;
      return;
  }
}

void store_double(DataType type, void* base, size_t index, double value) {
  switch (type) {
    case DataType::kFloat16:
      static_cast<uint16_t*>(base)[index] = cpu::float_to_half(static_cast<float>(value));
      return;
    case DataType::kBFloat16:
      static_cast<uint16_t*>(base)[index] = cpu::float_to_bfloat16(static_cast<float>(value));
      return;
    case DataType::kFloat32:
      static_cast<float*>(base)[index] = static_cast<float>(value);
      return;
    case DataType::kFloat64:
      static_cast<double*>(base)[index] = value;
      return;
    default:
      throw ConformanceFailure("conformance: store_double of a non-floating type");
  }
}

double load(DataType type, const void* base, size_t index) {
  switch (type) {
    case DataType::kUInt8:
    case DataType::kBool:
      return static_cast<const uint8_t*>(base)[index];
    case DataType::kInt8:
      return static_cast<const int8_t*>(base)[index];
    case DataType::kInt16:
      return static_cast<const int16_t*>(base)[index];
    case DataType::kInt32:
      return static_cast<const int32_t*>(base)[index];
    case DataType::kInt64:
      return static_cast<double>(static_cast<const int64_t*>(base)[index]);
    case DataType::kFloat16:
      return cpu::half_to_float(static_cast<const uint16_t*>(base)[index]);
    case DataType::kBFloat16:
      return cpu::bfloat16_to_float(static_cast<const uint16_t*>(base)[index]);
    case DataType::kFloat32:
      return static_cast<const float*>(base)[index];
    case DataType::kFloat64:
      return static_cast<const double*>(base)[index];
  }
  return 0;
}

void expect_equal(const Backend& backend, const std::string& what, DataType type, const void* got,
                  const void* expected, size_t count) {
  const size_t esize = element_size(type);
  if (count == 0 || std::memcmp(got, expected, count * esize) == 0) return;
  size_t first = 0;
  while (first < count &&
         std::memcmp(static_cast<const char*>(got) + first * esize,
                     static_cast<const char*>(expected) + first * esize, esize) == 0) {
    ++first;
  }
  std::ostringstream message;
  message << "conformance failure on rank " << backend.rank() << " of " << backend.size() << " ("
          << backend.name() << "): " << what << ", dtype " << data_type_name(type) << ", count "
          << count << ": first difference at element " << first << ": got "
          << load(type, got, first) << ", expected " << load(type, expected, first);
  throw ConformanceFailure(message.str());
}

void expect_true(const Backend& backend, bool condition, const std::string& what) {
  if (condition) return;
  throw ConformanceFailure("conformance failure on rank " + std::to_string(backend.rank()) +
                           " of " + std::to_string(backend.size()) + " (" +
                           std::string(backend.name()) + "): " + what);
}

}  // namespace runrun::conformance
