#pragma once
// Why: the conformance suite's deterministic inputs, reference arithmetic and exact comparison,
// shared by its collective and control-channel checks (see backend_conformance.h).
// Thread-safety: pure functions.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "common/data_type.h"
#include "common/reduce_op.h"
#include "ops/backend.h"

namespace runrun::conformance {

inline constexpr DataType kAllTypes[] = {
    DataType::kUInt8,   DataType::kInt8,    DataType::kInt16,    DataType::kInt32,
    DataType::kInt64,   DataType::kFloat16, DataType::kBFloat16, DataType::kFloat32,
    DataType::kFloat64, DataType::kBool};
inline constexpr ReduceOp kAllOps[] = {ReduceOp::kSum, ReduceOp::kMin, ReduceOp::kMax,
                                       ReduceOp::kProduct};
// One dtype per element size, for ops that only move bytes.
inline constexpr DataType kByteTypes[] = {DataType::kUInt8, DataType::kBFloat16, DataType::kInt32,
                                          DataType::kFloat64};

// Element `index` of what `source` contributes: a small integer (0/1 for bool), chosen so any
// reduction over up to 8 ranks is exact in every dtype (|sum| <= 32, |product| <= 256).
int64_t input_value(int source, size_t index, DataType type, ReduceOp op);

// op applied to two reference values (bool: Sum/Max = or, Min/Product = and).
int64_t combine(int64_t a, int64_t b, DataType type, ReduceOp op);

// A buffer of `count` elements of `type` with element i = value(i).
template <typename ValueFn>
std::vector<char> make_buffer(DataType type, size_t count, ValueFn value);

void store(DataType type, void* base, size_t index, int64_t value);
// A floating-point `type`'s element from a double (rounded as the dtype's conversion rounds).
void store_double(DataType type, void* base, size_t index, double value);
double load(DataType type, const void* base, size_t index);

// Throws ConformanceFailure naming the rank, `what`, dtype, count and first differing element
// unless the `count` elements at `got` and `expected` are bitwise equal.
void expect_equal(const Backend& backend, const std::string& what, DataType type, const void* got,
                  const void* expected, size_t count);

// Throws ConformanceFailure with the rank prefix unless `condition`.
void expect_true(const Backend& backend, bool condition, const std::string& what);

template <typename ValueFn>
std::vector<char> make_buffer(DataType type, size_t count, ValueFn value) {
  std::vector<char> buffer(count * element_size(type) + 1);  // +1: data() is never null
  for (size_t i = 0; i < count; ++i) store(type, buffer.data(), i, value(i));
  return buffer;
}

}  // namespace runrun::conformance
