#pragma once
// Why: float16 and bfloat16 have no native C++ arithmetic on the CPUs we target, so every
// reduction of them goes through float32. These conversions are exact where the value is
// representable, round to nearest even otherwise, keep Inf, turn every NaN into a quiet NaN of
// the same sign (keeping what fits of the payload), and handle subnormals in both directions. They
// are written without branches (every path is computed and one is selected) so GCC vectorizes loops
// that call them. Thread-safety: pure functions.

#include <bit>
#include <cstdint>

namespace runrun::cpu {

// IEEE binary16 -> binary32 (exact).
inline float half_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t magnitude = h & 0x7fffu;
  // Normal numbers: move exponent and mantissa into place and rebias the exponent (127 - 15).
  const uint32_t normal = (magnitude << 13) + (112u << 23);
  // Inf/NaN: the exponent must become all ones (add the rest of the rebias to 255).
  const uint32_t inf_nan = (magnitude << 13) | 0x7f800000u;
  // Subnormals (and zero): the value is magnitude * 2^-24, exact in float32.
  const float subnormal_value = static_cast<float>(magnitude) * 0x1p-24f;
  const uint32_t subnormal = std::bit_cast<uint32_t>(subnormal_value);
  const uint32_t bits = magnitude >= 0x7c00u ? inf_nan : (magnitude < 0x0400u ? subnormal : normal);
  return std::bit_cast<float>(bits | sign);
}

// IEEE binary32 -> binary16, round to nearest even; overflow gives Inf.
inline uint16_t float_to_half(float f) {
  const uint32_t bits = std::bit_cast<uint32_t>(f);
  const uint32_t sign = (bits >> 16) & 0x8000u;
  const uint32_t magnitude = bits & 0x7fffffffu;
  // Normal half results: rebias the exponent by -112, then add 0xfff plus the lowest kept bit so
  // that the 13 dropped bits round to nearest, ties to even. A carry out of the mantissa
  // correctly bumps the exponent (up to Inf for values >= 65520).
  const uint32_t normal = (magnitude - (112u << 23) + 0xfffu + ((magnitude >> 13) & 1u)) >> 13;
  // Subnormal half results (|f| < 2^-14): adding 0.5f aligns the 10 result bits at the bottom of
  // the float32 mantissa and lets the FPU round them to nearest even.
  const float shifted = std::bit_cast<float>(magnitude) + 0.5f;
  const uint32_t subnormal = std::bit_cast<uint32_t>(shifted) - 0x3f000000u;
  // |f| >= 65536 or Inf -> Inf; NaN -> quiet NaN keeping the payload's top mantissa bits.
  const uint32_t nan = 0x7e00u | ((magnitude >> 13) & 0x3ffu);
  const uint32_t too_big = magnitude > 0x7f800000u ? nan : 0x7c00u;
  const uint32_t result =
      magnitude >= 0x47800000u ? too_big : (magnitude < 0x38800000u ? subnormal : normal);
  return static_cast<uint16_t>(result | sign);
}

// bfloat16 -> float32 (exact: bfloat16 is the upper half of a float32).
inline float bfloat16_to_float(uint16_t b) {
  return std::bit_cast<float>(static_cast<uint32_t>(b) << 16);
}

// float32 -> bfloat16, round to nearest even; NaN -> quiet NaN of the same sign.
inline uint16_t float_to_bfloat16(float f) {
  const uint32_t bits = std::bit_cast<uint32_t>(f);
  const uint32_t rounded = (bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16;
  const uint32_t quiet_nan = (bits >> 16) | 0x0040u;
  const bool is_nan = (bits & 0x7fffffffu) > 0x7f800000u;
  return static_cast<uint16_t>(is_nan ? quiet_nan : rounded);
}

}  // namespace runrun::cpu
