// float16/bfloat16 conversions: exhaustive exactness, round-to-nearest-even at every midpoint,
// special values.

#include <catch2/catch.hpp>

#include <bit>
#include <cmath>
#include <cstdint>

#include "ops/cpu/half.h"

using runrun::cpu::bfloat16_to_float;
using runrun::cpu::float_to_bfloat16;
using runrun::cpu::float_to_half;
using runrun::cpu::half_to_float;

namespace {

// Value of a binary16 bit pattern computed from the IEEE definition.
double reference_half(uint16_t h) {
  const int sign = (h & 0x8000) ? -1 : 1;
  const int exponent = (h >> 10) & 0x1f;
  const int mantissa = h & 0x3ff;
  if (exponent == 0) return sign * std::ldexp(mantissa, -24);
  if (exponent == 31) return mantissa ? NAN : sign * INFINITY;
  return sign * std::ldexp(1024 + mantissa, exponent - 25);
}

}  // namespace

TEST_CASE("half_to_float is exact for every binary16 value and float_to_half inverts it") {
  for (uint32_t bits = 0; bits <= 0xffff; ++bits) {
    const auto h = static_cast<uint16_t>(bits);
    const float f = half_to_float(h);
    const double expected = reference_half(h);
    if (std::isnan(expected)) {
      REQUIRE(std::isnan(f));
      REQUIRE(std::signbit(f) == static_cast<bool>(h & 0x8000));
      REQUIRE(float_to_half(f) == ((h & 0x8000) | 0x7e00 | (h & 0x3ff)));
    } else {
      REQUIRE(static_cast<double>(f) == expected);
      REQUIRE(std::signbit(f) == static_cast<bool>(h & 0x8000));
      REQUIRE(float_to_half(f) == h);
    }
  }
}

TEST_CASE("float_to_half rounds to nearest even at every midpoint") {
  // Adjacent positive finite halves h, h+1: the midpoint is exact in float32.
  for (uint32_t h = 0; h < 0x7bff; ++h) {
    const float low = half_to_float(static_cast<uint16_t>(h));
    const float high = half_to_float(static_cast<uint16_t>(h + 1));
    const float mid = (low + high) / 2;
    const uint16_t even = (h % 2 == 0) ? static_cast<uint16_t>(h) : static_cast<uint16_t>(h + 1);
    REQUIRE(float_to_half(mid) == even);
    REQUIRE(float_to_half(std::nextafter(mid, 0.0f)) == h);
    REQUIRE(float_to_half(std::nextafter(mid, INFINITY)) == h + 1);
    REQUIRE(float_to_half(-mid) == (even | 0x8000));
  }
}

TEST_CASE("float_to_half special values") {
  CHECK(float_to_half(0.0f) == 0x0000);
  CHECK(float_to_half(-0.0f) == 0x8000);
  CHECK(float_to_half(65504.0f) == 0x7bff);
  CHECK(float_to_half(65519.99f) == 0x7bff);
  CHECK(float_to_half(65520.0f) == 0x7c00);  // the midpoint to the next (infinite) value
  CHECK(float_to_half(1e10f) == 0x7c00);
  CHECK(float_to_half(-1e10f) == 0xfc00);
  CHECK(float_to_half(INFINITY) == 0x7c00);
  CHECK(float_to_half(-INFINITY) == 0xfc00);
  CHECK(float_to_half(NAN) == 0x7e00);
  CHECK(float_to_half(-NAN) == 0xfe00);
  CHECK(float_to_half(std::ldexp(1.0f, -24)) == 0x0001);  // smallest subnormal
  CHECK(float_to_half(std::ldexp(1.0f, -25)) == 0x0000);  // tie to even (0)
  CHECK(float_to_half(std::ldexp(1.0f, -26)) == 0x0000);
  CHECK(float_to_half(std::ldexp(3.0f, -25)) == 0x0002);  // tie between 1 and 2 -> 2
  CHECK(float_to_half(std::ldexp(1.0f, -14)) == 0x0400);  // smallest normal
  CHECK(float_to_half(1.0f + std::ldexp(1.0f, -11)) == 0x3c00);
  CHECK(float_to_half(1.0f + 3 * std::ldexp(1.0f, -11)) == 0x3c02);
}

TEST_CASE("bfloat16 conversions: exact widening, nearest-even narrowing, specials") {
  for (uint32_t bits = 0; bits <= 0xffff; ++bits) {
    const auto b = static_cast<uint16_t>(bits);
    const float f = bfloat16_to_float(b);
    REQUIRE(std::bit_cast<uint32_t>(f) == bits << 16);
    if (std::isnan(f)) {
      REQUIRE(float_to_bfloat16(f) == (b | 0x0040));
    } else {
      REQUIRE(float_to_bfloat16(f) == b);
    }
  }
  for (uint32_t b = 0; b < 0x7f7f; ++b) {
    const uint32_t mid_bits = (b << 16) | 0x8000u;  // exactly halfway to b + 1
    const float mid = std::bit_cast<float>(mid_bits);
    const uint32_t even = (b % 2 == 0) ? b : b + 1;
    REQUIRE(float_to_bfloat16(mid) == even);
    REQUIRE(float_to_bfloat16(std::bit_cast<float>(mid_bits - 1)) == b);
    REQUIRE(float_to_bfloat16(std::bit_cast<float>(mid_bits + 1)) == b + 1);
  }
  CHECK(float_to_bfloat16(INFINITY) == 0x7f80);
  CHECK(float_to_bfloat16(-INFINITY) == 0xff80);
  CHECK(float_to_bfloat16(3.4e38f) == 0x7f80);  // rounds past the largest finite value
  CHECK(float_to_bfloat16(NAN) == 0x7fc0);
  CHECK(float_to_bfloat16(std::bit_cast<float>(0x7f800001u)) == 0x7fc0);  // signalling -> quiet
  CHECK(float_to_bfloat16(-0.0f) == 0x8000);
  CHECK(float_to_bfloat16(std::bit_cast<float>(0x00018000u)) == 0x0002);  // subnormal tie -> even
}
