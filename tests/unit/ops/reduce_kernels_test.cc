// cpu kernels: every dtype x op against a scalar reference, at counts 0, 1, 7, 1000003;
// reduce_to in its three aliasings; copy_bytes at every relative alignment; scale/divide
// semantics; bad arguments.

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "common/errors.h"
#include "ops/cpu/copy_bytes.h"
#include "ops/cpu/half.h"
#include "ops/cpu/reduce_kernels.h"

namespace {

using runrun::DataType;
using runrun::ReduceOp;
namespace cpu = runrun::cpu;

constexpr DataType kTypes[] = {DataType::kUInt8,    DataType::kInt8,    DataType::kInt16,
                               DataType::kInt32,    DataType::kInt64,   DataType::kFloat16,
                               DataType::kBFloat16, DataType::kFloat32, DataType::kFloat64,
                               DataType::kBool};
constexpr ReduceOp kOps[] = {ReduceOp::kSum, ReduceOp::kMin, ReduceOp::kMax, ReduceOp::kProduct};

// Deterministic pseudo-random bits.
uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// Element i of a test input: full-range integers (to exercise wrap-around), finite floats of
// mixed signs and magnitudes, bools as arbitrary non-zero bytes.
void fill(DataType type, std::vector<unsigned char>& buffer, size_t count, uint64_t seed) {
  for (size_t i = 0; i < count; ++i) {
    const uint64_t r = mix(seed * 1000003 + i);
    const double real = (static_cast<double>(r % 20001) - 10000.0) / 64.0;
    unsigned char* p = buffer.data() + i * runrun::element_size(type);
    switch (type) {
      case DataType::kUInt8:
      case DataType::kInt8:
        *p = static_cast<unsigned char>(r);
        break;
      case DataType::kBool:
        *p = (r % 3 == 0) ? 0 : static_cast<unsigned char>(1 + r % 200);
        break;
      case DataType::kInt16: {
        const auto v = static_cast<uint16_t>(r);
        std::memcpy(p, &v, 2);
        break;
      }
      case DataType::kInt32: {
        const auto v = static_cast<uint32_t>(r);
        std::memcpy(p, &v, 4);
        break;
      }
      case DataType::kInt64:
        std::memcpy(p, &r, 8);
        break;
      case DataType::kFloat16: {
        const uint16_t v = cpu::float_to_half(static_cast<float>(real));
        std::memcpy(p, &v, 2);
        break;
      }
      case DataType::kBFloat16: {
        const uint16_t v = cpu::float_to_bfloat16(static_cast<float>(real));
        std::memcpy(p, &v, 2);
        break;
      }
      case DataType::kFloat32: {
        const auto v = static_cast<float>(real);
        std::memcpy(p, &v, 4);
        break;
      }
      case DataType::kFloat64:
        std::memcpy(p, &real, 8);
        break;
    }
  }
}

template <typename T>
T scalar(T a, T b, ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum:
      return static_cast<T>(a + b);
    case ReduceOp::kMin:
      return b < a ? b : a;
    case ReduceOp::kMax:
      return a < b ? b : a;
    default:
      return static_cast<T>(a * b);
  }
}

// Integers: computed in uint64 (wrap) and truncated, which is the two's-complement result.
template <typename T>
void reference_int(unsigned char* acc, const unsigned char* in, ReduceOp op) {
  T a;
  T b;
  std::memcpy(&a, acc, sizeof(T));
  std::memcpy(&b, in, sizeof(T));
  T result;
  if (op == ReduceOp::kSum) {
    result = static_cast<T>(static_cast<uint64_t>(static_cast<int64_t>(a)) +
                            static_cast<uint64_t>(static_cast<int64_t>(b)));
  } else if (op == ReduceOp::kProduct) {
    result = static_cast<T>(static_cast<uint64_t>(static_cast<int64_t>(a)) *
                            static_cast<uint64_t>(static_cast<int64_t>(b)));
  } else {
    result = scalar(a, b, op);
  }
  std::memcpy(acc, &result, sizeof(T));
}

void reference(DataType type, unsigned char* acc, const unsigned char* in, ReduceOp op) {
  switch (type) {
    case DataType::kUInt8:
      return reference_int<uint8_t>(acc, in, op);
    case DataType::kInt8:
      return reference_int<int8_t>(acc, in, op);
    case DataType::kInt16:
      return reference_int<int16_t>(acc, in, op);
    case DataType::kInt32:
      return reference_int<int32_t>(acc, in, op);
    case DataType::kInt64:
      return reference_int<int64_t>(acc, in, op);
    case DataType::kBool: {
      const bool a = *acc != 0;
      const bool b = *in != 0;
      *acc = (op == ReduceOp::kSum || op == ReduceOp::kMax) ? (a || b) : (a && b);
      return;
    }
    case DataType::kFloat16:
    case DataType::kBFloat16: {
      uint16_t a;
      uint16_t b;
      std::memcpy(&a, acc, 2);
      std::memcpy(&b, in, 2);
      const bool bf = type == DataType::kBFloat16;
      const float fa = bf ? cpu::bfloat16_to_float(a) : cpu::half_to_float(a);
      const float fb = bf ? cpu::bfloat16_to_float(b) : cpu::half_to_float(b);
      const float r = scalar(fa, fb, op);
      const uint16_t result = bf ? cpu::float_to_bfloat16(r) : cpu::float_to_half(r);
      std::memcpy(acc, &result, 2);
      return;
    }
    case DataType::kFloat32: {
      float a, b;
      std::memcpy(&a, acc, 4);
      std::memcpy(&b, in, 4);
      const float r = scalar(a, b, op);
      std::memcpy(acc, &r, 4);
      return;
    }
    case DataType::kFloat64: {
      double a, b;
      std::memcpy(&a, acc, 8);
      std::memcpy(&b, in, 8);
      const double r = scalar(a, b, op);
      std::memcpy(acc, &r, 8);
      return;
    }
  }
}

}  // namespace

TEST_CASE("reduce_into matches a scalar reference for every dtype, op and count") {
  for (DataType type : kTypes) {
    for (ReduceOp op : kOps) {
      for (size_t count : {size_t{0}, size_t{1}, size_t{7}, size_t{1000003}}) {
        const size_t esize = runrun::element_size(type);
        std::vector<unsigned char> acc(count * esize + 1);
        std::vector<unsigned char> in(count * esize + 1);
        fill(type, acc, count, 1);
        fill(type, in, count, 2);
        std::vector<unsigned char> expected = acc;
        for (size_t i = 0; i < count; ++i)
          reference(type, &expected[i * esize], &in[i * esize], op);
        cpu::reduce_into(acc.data(), in.data(), count, type, op);
        INFO("dtype " << runrun::data_type_name(type) << " op " << runrun::reduce_op_name(op)
                      << " count " << count);
        size_t first = 0;
        while (first < count &&
               std::memcmp(&acc[first * esize], &expected[first * esize], esize) == 0)
          ++first;
        INFO("first difference at element " << first);
        REQUIRE(first == count);
      }
    }
  }
}

TEST_CASE("reduce_to gives reduce_into's bits into a third buffer, into a, and into b") {
  // The three forms of the kernel (out apart from both inputs, out == a, out == b) each have
  // their own loop; counts around the vector widths.
  for (DataType type : kTypes) {
    for (ReduceOp op : kOps) {
      for (size_t count : {size_t{0}, size_t{1}, size_t{7}, size_t{33}, size_t{4099}}) {
        const size_t esize = runrun::element_size(type);
        std::vector<unsigned char> a(count * esize + 1);
        std::vector<unsigned char> b(count * esize + 1);
        fill(type, a, count, 3);
        fill(type, b, count, 4);
        std::vector<unsigned char> expected = a;
        for (size_t i = 0; i < count; ++i) reference(type, &expected[i * esize], &b[i * esize], op);
        INFO("dtype " << runrun::data_type_name(type) << " op " << runrun::reduce_op_name(op)
                      << " count " << count);
        std::vector<unsigned char> apart(count * esize + 1, 0xa5);
        cpu::reduce_to(apart.data(), a.data(), b.data(), count, type, op);
        CHECK(std::memcmp(apart.data(), expected.data(), count * esize) == 0);
        CHECK(apart[count * esize] == 0xa5);  // nothing written past the end
        std::vector<unsigned char> into_a = a;
        cpu::reduce_to(into_a.data(), into_a.data(), b.data(), count, type, op);
        CHECK(std::memcmp(into_a.data(), expected.data(), count * esize) == 0);
        std::vector<unsigned char> into_b = b;
        cpu::reduce_to(into_b.data(), a.data(), into_b.data(), count, type, op);
        CHECK(std::memcmp(into_b.data(), expected.data(), count * esize) == 0);
      }
    }
  }
}

TEST_CASE("copy_bytes copies exactly, at every relative alignment and around its thresholds") {
  // Sizes below, at and above the 2 KiB where the vector loop starts, with tails that are not a
  // multiple of its 64-byte step; every destination offset modulo 64 against a few sources.
  std::vector<unsigned char> source(70000 + 128);
  for (size_t i = 0; i < source.size(); ++i) source[i] = static_cast<unsigned char>(mix(i));
  std::vector<unsigned char> target(source.size() + 128);
  const auto aligned = [](std::vector<unsigned char>& v) {
    const auto address = reinterpret_cast<uintptr_t>(v.data());
    return v.data() + (64 - address % 64) % 64;
  };
  unsigned char* src_base = aligned(source);
  unsigned char* dst_base = aligned(target);
  for (size_t bytes : {size_t{0}, size_t{1}, size_t{63}, size_t{2047}, size_t{2048}, size_t{2049},
                       size_t{4096 + 37}, size_t{65536 + 5}}) {
    for (size_t src_offset : {size_t{0}, size_t{1}, size_t{16}, size_t{48}}) {
      for (size_t dst_offset = 0; dst_offset < 64; ++dst_offset) {
        std::fill(target.begin(), target.end(), 0x5a);
        const unsigned char* from = src_base + src_offset;
        unsigned char* to = dst_base + dst_offset;
        cpu::copy_bytes(to, from, bytes);
        INFO(bytes << " bytes, source +" << src_offset << ", destination +" << dst_offset);
        REQUIRE(std::memcmp(to, from, bytes) == 0);
        const auto untouched = [](const unsigned char* begin, const unsigned char* end) {
          return std::all_of(begin, end, [](unsigned char c) { return c == 0x5a; });
        };
        REQUIRE(untouched(target.data(), to));
        REQUIRE(untouched(to + bytes, target.data() + target.size()));
      }
    }
  }
}

TEST_CASE("reduce_into on float16 rounds the float32 result to nearest even") {
  // 2048 + 1 is a tie in float16 (spacing 2 above 2048): rounds to the even 2048.
  uint16_t acc = cpu::float_to_half(2048.0f);
  const uint16_t one = cpu::float_to_half(1.0f);
  cpu::reduce_into(&acc, &one, 1, DataType::kFloat16, ReduceOp::kSum);
  CHECK(cpu::half_to_float(acc) == 2048.0f);
  // 60000 + 60000 overflows float16's largest finite value (65504): Inf.
  uint16_t big = cpu::float_to_half(60000.0f);
  const uint16_t big_copy = big;
  cpu::reduce_into(&big, &big_copy, 1, DataType::kFloat16, ReduceOp::kSum);
  CHECK(big == 0x7c00);
  // bfloat16 keeps 8 significant bits: 256 + 1 is a tie and rounds to the even 256.
  uint16_t b = cpu::float_to_bfloat16(256.0f);
  const uint16_t b_one = cpu::float_to_bfloat16(1.0f);
  cpu::reduce_into(&b, &b_one, 1, DataType::kBFloat16, ReduceOp::kSum);
  CHECK(cpu::bfloat16_to_float(b) == 256.0f);
}

TEST_CASE("reduce_into rejects average") {
  float a = 1;
  float b = 2;
  CHECK_THROWS_AS(cpu::reduce_into(&a, &b, 1, DataType::kFloat32, ReduceOp::kAverage),
                  runrun::InvalidArgumentError);
}

TEST_CASE("scale_buffer: integers truncate toward zero through double (Horovod), clamped") {
  std::vector<int8_t> i8{3, -3, 100, -100, 1, 7, -7};
  cpu::scale_buffer(i8.data(), i8.size(), DataType::kInt8, 0.5);
  CHECK(i8 == std::vector<int8_t>{1, -1, 50, -50, 0, 3, -3});
  std::vector<int16_t> i16{1001, -1001, 32767, -32768, 9};
  cpu::scale_buffer(i16.data(), i16.size(), DataType::kInt16, 0.75);
  CHECK(i16 == std::vector<int16_t>{750, -750, 24575, -24576, 6});
  std::vector<int16_t> i16_clamp{20000, -20000};
  cpu::scale_buffer(i16_clamp.data(), i16_clamp.size(), DataType::kInt16, 2.0);
  CHECK(i16_clamp == std::vector<int16_t>{32767, -32768});
  std::vector<int32_t> i32{10, -10, 3};
  cpu::scale_buffer(i32.data(), i32.size(), DataType::kInt32, 0.3);
  CHECK(i32 == std::vector<int32_t>{3, -3, 0});
  std::vector<int8_t> clamp{100, -100};
  cpu::scale_buffer(clamp.data(), clamp.size(), DataType::kInt8, 2.0);
  CHECK(clamp == std::vector<int8_t>{127, -128});
  std::vector<uint8_t> u8{10, 200};
  cpu::scale_buffer(u8.data(), u8.size(), DataType::kUInt8, -1.0);
  CHECK(u8 == std::vector<uint8_t>{0, 0});
  std::vector<int64_t> i64{std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min(),
                           7};
  cpu::scale_buffer(i64.data(), i64.size(), DataType::kInt64, 4.0);
  CHECK(i64 == std::vector<int64_t>{std::numeric_limits<int64_t>::max(),
                                    std::numeric_limits<int64_t>::min(), 28});
  std::vector<int32_t> nan_scaled{5};
  cpu::scale_buffer(nan_scaled.data(), 1, DataType::kInt32, NAN);
  CHECK(nan_scaled[0] == 0);
  std::vector<float> f32{1.5f, -2.0f};
  cpu::scale_buffer(f32.data(), f32.size(), DataType::kFloat32, 0.1);
  CHECK(f32 == std::vector<float>{1.5f * 0.1f, -2.0f * 0.1f});
  std::vector<uint16_t> f16{cpu::float_to_half(3.0f)};
  cpu::scale_buffer(f16.data(), 1, DataType::kFloat16, 0.5);
  CHECK(cpu::half_to_float(f16[0]) == 1.5f);
  std::vector<uint16_t> bf16{cpu::float_to_bfloat16(3.0f)};
  cpu::scale_buffer(bf16.data(), 1, DataType::kBFloat16, 0.25);
  CHECK(cpu::bfloat16_to_float(bf16[0]) == 0.75f);
  uint8_t flag = 1;
  CHECK_THROWS_AS(cpu::scale_buffer(&flag, 1, DataType::kBool, 2.0), runrun::InvalidArgumentError);
}

TEST_CASE("divide_buffer: truncating integer division, float division") {
  std::vector<int32_t> i32{7, -7, 8, 0};
  cpu::divide_buffer(i32.data(), i32.size(), DataType::kInt32, 2);
  CHECK(i32 == std::vector<int32_t>{3, -3, 4, 0});
  std::vector<int16_t> i16{-32768, 32767, 5};
  cpu::divide_buffer(i16.data(), i16.size(), DataType::kInt16, 3);
  CHECK(i16 == std::vector<int16_t>{-10922, 10922, 1});
  std::vector<uint8_t> u8{255, 3};
  cpu::divide_buffer(u8.data(), u8.size(), DataType::kUInt8, 4);
  CHECK(u8 == std::vector<uint8_t>{63, 0});
  std::vector<int8_t> i8{-128, 127};
  cpu::divide_buffer(i8.data(), i8.size(), DataType::kInt8, 3);
  CHECK(i8 == std::vector<int8_t>{-42, 42});
  std::vector<double> f64{1.0, -3.0};
  cpu::divide_buffer(f64.data(), f64.size(), DataType::kFloat64, 3);
  CHECK(f64 == std::vector<double>{1.0 / 3.0, -1.0});
  std::vector<float> f32{1.0f};
  cpu::divide_buffer(f32.data(), 1, DataType::kFloat32, 3);
  CHECK(f32[0] == 1.0f / 3.0f);
  std::vector<uint16_t> f16{cpu::float_to_half(1.0f)};
  cpu::divide_buffer(f16.data(), 1, DataType::kFloat16, 3);
  CHECK(f16[0] == cpu::float_to_half(1.0f / 3.0f));
  std::vector<uint16_t> bf16{cpu::float_to_bfloat16(1.0f)};
  cpu::divide_buffer(bf16.data(), 1, DataType::kBFloat16, 3);
  CHECK(bf16[0] == cpu::float_to_bfloat16(1.0f / 3.0f));
  uint8_t flag = 1;
  CHECK_THROWS_AS(cpu::divide_buffer(&flag, 1, DataType::kBool, 2), runrun::InvalidArgumentError);
  CHECK_THROWS_AS(cpu::divide_buffer(f32.data(), 1, DataType::kFloat32, 0),
                  runrun::InvalidArgumentError);
}
