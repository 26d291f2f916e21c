#pragma once
// Why: the one list of element types the runtime moves and reduces. Every layer (C API, core,
// backends, kernels) speaks this enum; DLPack and MPI types are converted at the edges.
// Thread-safety: plain values and pure functions.

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace runrun {

enum class DataType : int32_t {
  kUInt8 = 0,
  kInt8 = 1,
  kInt32 = 2,
  kInt64 = 3,
  kFloat16 = 4,
  kBFloat16 = 5,
  kFloat32 = 6,
  kFloat64 = 7,
  kBool = 8,
  kInt16 = 9,  // appended: codes are stable
};

inline constexpr int kNumDataTypes = 10;

// Size of one element in bytes.
size_t element_size(DataType type);

// Lower-case name as users write it ("float32", "bfloat16").
std::string_view data_type_name(DataType type);

// True for float16, bfloat16, float32, float64.
bool is_floating_point(DataType type);

// Throws InvalidArgumentError when `value` is not one of the enum's values.
DataType data_type_from_int(int value);

}  // namespace runrun
