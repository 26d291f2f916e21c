#pragma once
// Why: the fake NCCL (fake_nccl.cc) computes reductions exactly as NCCL defines them, on
// elements of every NCCL data type read from and written to raw bytes; these are those reads
// and writes (floats through double, integers through int64_t), apart from the fake's state.
// Threading: pure functions.

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "ops/cpu/half.h"
#include "ops/nccl/nccl_abi.h"

namespace fake_nccl {

namespace abi = runrun::gpu::nccl_abi;

inline size_t type_size(abi::DataType t) {
  switch (t) {
    case abi::kInt8:
    case abi::kUint8:
      return 1;
    case abi::kFloat16:
    case abi::kBfloat16:
      return 2;
    case abi::kInt32:
    case abi::kUint32:
    case abi::kFloat32:
      return 4;
    default:
      return 8;
  }
}

inline bool is_float(abi::DataType t) {
  return t == abi::kFloat16 || t == abi::kBfloat16 || t == abi::kFloat32 || t == abi::kFloat64;
}

inline double load_float(const unsigned char* p, abi::DataType t) {
  if (t == abi::kFloat16 || t == abi::kBfloat16) {
    uint16_t h;
    std::memcpy(&h, p, 2);
    return t == abi::kFloat16 ? runrun::cpu::half_to_float(h) : runrun::cpu::bfloat16_to_float(h);
  }
  if (t == abi::kFloat32) {
    float f;
    std::memcpy(&f, p, 4);
    return f;
  }
  double d;
  std::memcpy(&d, p, 8);
  return d;
}

inline void store_float(unsigned char* p, abi::DataType t, double v) {
  if (t == abi::kFloat16 || t == abi::kBfloat16) {
    const float f = static_cast<float>(v);
    const uint16_t h =
        t == abi::kFloat16 ? runrun::cpu::float_to_half(f) : runrun::cpu::float_to_bfloat16(f);
    std::memcpy(p, &h, 2);
  } else if (t == abi::kFloat32) {
    const float f = static_cast<float>(v);
    std::memcpy(p, &f, 4);
  } else {
    std::memcpy(p, &v, 8);
  }
}

inline bool is_signed(abi::DataType t) {
  return t == abi::kInt8 || t == abi::kInt32 || t == abi::kInt64;
}

inline int64_t load_int(const unsigned char* p, abi::DataType t) {
  const size_t n = type_size(t);
  uint64_t u = 0;
  std::memcpy(&u, p, n);  // little endian
  if (is_signed(t) && n < 8 && (u >> (8 * n - 1)) & 1) u |= ~uint64_t{0} << (8 * n);
  return static_cast<int64_t>(u);
}

inline void store_int(unsigned char* p, abi::DataType t, int64_t v) {
  const uint64_t u = static_cast<uint64_t>(v);
  std::memcpy(p, &u, type_size(t));
}

}  // namespace fake_nccl
