#include "ops/cpu/reduce_kernels.h"

#include <cmath>
#include <limits>
#include <string>
#include <type_traits>

#include "common/errors.h"
#include "ops/cpu/half.h"

namespace runrun::cpu {
namespace {

// Arithmetic in the type's own width with wrap-around for integers (unsigned arithmetic has no
// undefined overflow; the conversion back is modular in C++20).
template <typename T>
T add(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
  } else {
    return a + b;
  }
}

template <typename T>
T multiply(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    // Promote to at least unsigned int so uint16-like promotions to int cannot overflow.
    using U = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;
    return static_cast<T>(static_cast<U>(static_cast<U>(a) * static_cast<U>(b)));
  } else {
    return a * b;
  }
}

template <typename T, ReduceOp Op>
T apply(T a, T b) {
  if constexpr (Op == ReduceOp::kSum) return add(a, b);
  if constexpr (Op == ReduceOp::kProduct) return multiply(a, b);
  if constexpr (Op == ReduceOp::kMin) return b < a ? b : a;
  if constexpr (Op == ReduceOp::kMax) return a < b ? b : a;
}

// Which operands a kernel call aliases: kInto writes op(out, b) into out (a is out), kRight
// writes op(a, out) into out (b is out), kApart writes op(a, b) into a third buffer. One loop
// each, so every pointer can be __restrict and the loop vectorizes.
enum class Form { kInto, kRight, kApart };

// out[i] = fn(a[i], b[i]) for the aliasing that `F` names.
template <typename T, Form F, typename Fn>
inline void elementwise(void* out, const void* a, const void* b, size_t count, Fn fn) {
  T* __restrict o = static_cast<T*>(out);
  if constexpr (F == Form::kInto) {
    const T* __restrict y = static_cast<const T*>(b);
    for (size_t i = 0; i < count; ++i) o[i] = fn(o[i], y[i]);
  } else if constexpr (F == Form::kRight) {
    const T* __restrict x = static_cast<const T*>(a);
    for (size_t i = 0; i < count; ++i) o[i] = fn(x[i], o[i]);
  } else {
    const T* __restrict x = static_cast<const T*>(a);
    const T* __restrict y = static_cast<const T*>(b);
    for (size_t i = 0; i < count; ++i) o[i] = fn(x[i], y[i]);
  }
}

template <typename T, ReduceOp Op, Form F>
void reduce_native(void* out, const void* a, const void* b, size_t count) {
  elementwise<T, F>(out, a, b, count, [](T x, T y) { return apply<T, Op>(x, y); });
}

// float16 (IsBf16 = false) or bfloat16 (true), reduced through float32.
template <bool IsBf16, ReduceOp Op, Form F>
void reduce_16bit(void* out, const void* a, const void* b, size_t count) {
  elementwise<uint16_t, F>(out, a, b, count, [](uint16_t x, uint16_t y) -> uint16_t {
    if constexpr (IsBf16) {
      return float_to_bfloat16(apply<float, Op>(bfloat16_to_float(x), bfloat16_to_float(y)));
    } else {
      return float_to_half(apply<float, Op>(half_to_float(x), half_to_float(y)));
    }
  });
}

// bool: `Or` for Sum/Max, and for Min/Product; any non-zero byte is true, results are 0 or 1.
template <bool Or, Form F>
void reduce_bool(void* out, const void* a, const void* b, size_t count) {
  elementwise<uint8_t, F>(out, a, b, count, [](uint8_t x, uint8_t y) {
    const bool p = x != 0;
    const bool q = y != 0;
    return static_cast<uint8_t>(Or ? (p | q) : (p & q));
  });
}

using ReduceFn = void (*)(void*, const void*, const void*, size_t);

template <ReduceOp Op, Form F>
ReduceFn pick_for_op(DataType type) {
  switch (type) {
    case DataType::kUInt8:
      return &reduce_native<uint8_t, Op, F>;
    case DataType::kInt8:
      return &reduce_native<int8_t, Op, F>;
    case DataType::kInt16:
      return &reduce_native<int16_t, Op, F>;
    case DataType::kInt32:
      return &reduce_native<int32_t, Op, F>;
    case DataType::kInt64:
      return &reduce_native<int64_t, Op, F>;
    case DataType::kFloat16:
      return &reduce_16bit<false, Op, F>;
    case DataType::kBFloat16:
      return &reduce_16bit<true, Op, F>;
    case DataType::kFloat32:
      return &reduce_native<float, Op, F>;
    case DataType::kFloat64:
      return &reduce_native<double, Op, F>;
    case DataType::kBool:
      return Op == ReduceOp::kSum || Op == ReduceOp::kMax ? &reduce_bool<true, F>
                                                          : &reduce_bool<false, F>;
  }
  throw InvalidArgumentError(RUNRUN_WHERE, "reduce_into: unknown data type code " +
                                               std::to_string(static_cast<int>(type)));
}

template <Form F>
ReduceFn pick(DataType type, ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum:
      return pick_for_op<ReduceOp::kSum, F>(type);
    case ReduceOp::kMin:
      return pick_for_op<ReduceOp::kMin, F>(type);
    case ReduceOp::kMax:
      return pick_for_op<ReduceOp::kMax, F>(type);
    case ReduceOp::kProduct:
      return pick_for_op<ReduceOp::kProduct, F>(type);
    case ReduceOp::kAverage:
    case ReduceOp::kAdasum:
      break;
  }
  throw InvalidArgumentError(
      RUNRUN_WHERE,
      "reduce_into: op " + std::string(reduce_op_name(op)) +
          " is not a kernel reduction: use kSum and then divide_buffer for an average");
}

// value * factor in double, truncated toward zero (Horovod's integer scaling), clamped to T's
// range (where Horovod's conversion is undefined); NaN becomes 0.
template <typename T>
T scale_integer(T value, double factor) {
  const double product = std::trunc(static_cast<double>(value) * factor);
  constexpr double lowest = static_cast<double>(std::numeric_limits<T>::lowest());
  // max() + 1 is a power of two and exactly representable; max() itself may not be (int64).
  constexpr double above_max = static_cast<double>(std::numeric_limits<T>::max() / 2 + 1) * 2.0;
  if (std::isnan(product)) return 0;
  if (product < lowest) return std::numeric_limits<T>::lowest();
  if (product >= above_max) return std::numeric_limits<T>::max();
  return static_cast<T>(product);
}

template <typename T>
void scale_integers(void* buffer, size_t count, double factor) {
  T* __restrict data = static_cast<T*>(buffer);
  for (size_t i = 0; i < count; ++i) data[i] = scale_integer(data[i], factor);
}

template <bool IsBf16>
void scale_16bit(void* buffer, size_t count, float factor) {
  uint16_t* __restrict data = static_cast<uint16_t*>(buffer);
  for (size_t i = 0; i < count; ++i) {
    if constexpr (IsBf16) {
      data[i] = float_to_bfloat16(bfloat16_to_float(data[i]) * factor);
    } else {
      data[i] = float_to_half(half_to_float(data[i]) * factor);
    }
  }
}

template <typename T>
void scale_native(void* buffer, size_t count, T factor) {
  T* __restrict data = static_cast<T*>(buffer);
  for (size_t i = 0; i < count; ++i) data[i] *= factor;
}

template <typename T>
void divide_integers(void* buffer, size_t count, int64_t divisor) {
  T* __restrict data = static_cast<T*>(buffer);
  for (size_t i = 0; i < count; ++i)
    data[i] = static_cast<T>(static_cast<int64_t>(data[i]) / divisor);
}

template <bool IsBf16>
void divide_16bit(void* buffer, size_t count, float divisor) {
  uint16_t* __restrict data = static_cast<uint16_t*>(buffer);
  for (size_t i = 0; i < count; ++i) {
    if constexpr (IsBf16) {
      data[i] = float_to_bfloat16(bfloat16_to_float(data[i]) / divisor);
    } else {
      data[i] = float_to_half(half_to_float(data[i]) / divisor);
    }
  }
}

template <typename T>
void divide_native(void* buffer, size_t count, T divisor) {
  T* __restrict data = static_cast<T*>(buffer);
  for (size_t i = 0; i < count; ++i) data[i] /= divisor;
}

[[noreturn]] void throw_bool(const char* kernel) {
  throw InvalidArgumentError(RUNRUN_WHERE,
                             std::string(kernel) +
                                 ": bool tensors cannot be scaled or averaged: use "
                                 "a sum/min/max/product reduction or a numeric dtype");
}

[[noreturn]] void throw_unknown(const char* kernel, DataType type) {
  throw InvalidArgumentError(RUNRUN_WHERE, std::string(kernel) + ": unknown data type code " +
                                               std::to_string(static_cast<int>(type)));
}

}  // namespace

void reduce_into(void* accumulator, const void* input, size_t count, DataType type, ReduceOp op) {
  pick<Form::kInto>(type, op)(accumulator, accumulator, input, count);
}

void reduce_to(void* out, const void* a, const void* b, size_t count, DataType type, ReduceOp op) {
  if (out == a) return pick<Form::kInto>(type, op)(out, a, b, count);
  if (out == b) return pick<Form::kRight>(type, op)(out, a, b, count);
  pick<Form::kApart>(type, op)(out, a, b, count);
}

void scale_buffer(void* buffer, size_t count, DataType type, double factor) {
  switch (type) {
    case DataType::kUInt8:
      return scale_integers<uint8_t>(buffer, count, factor);
    case DataType::kInt8:
      return scale_integers<int8_t>(buffer, count, factor);
    case DataType::kInt16:
      return scale_integers<int16_t>(buffer, count, factor);
    case DataType::kInt32:
      return scale_integers<int32_t>(buffer, count, factor);
    case DataType::kInt64:
      return scale_integers<int64_t>(buffer, count, factor);
    case DataType::kFloat16:
      return scale_16bit<false>(buffer, count, static_cast<float>(factor));
    case DataType::kBFloat16:
      return scale_16bit<true>(buffer, count, static_cast<float>(factor));
    case DataType::kFloat32:
      return scale_native<float>(buffer, count, static_cast<float>(factor));
    case DataType::kFloat64:
      return scale_native<double>(buffer, count, factor);
    case DataType::kBool:
      throw_bool("scale_buffer");
  }
  throw_unknown("scale_buffer", type);
}

void divide_buffer(void* buffer, size_t count, DataType type, int64_t divisor) {
  if (divisor <= 0) {
    throw InvalidArgumentError(
        RUNRUN_WHERE, "divide_buffer: divisor must be positive, got " + std::to_string(divisor));
  }
  const auto divisor_f = static_cast<float>(divisor);
  switch (type) {
    case DataType::kUInt8:
      return divide_integers<uint8_t>(buffer, count, divisor);
    case DataType::kInt8:
      return divide_integers<int8_t>(buffer, count, divisor);
    case DataType::kInt16:
      return divide_integers<int16_t>(buffer, count, divisor);
    case DataType::kInt32:
      return divide_integers<int32_t>(buffer, count, divisor);
    case DataType::kInt64:
      return divide_integers<int64_t>(buffer, count, divisor);
    case DataType::kFloat16:
      return divide_16bit<false>(buffer, count, divisor_f);
    case DataType::kBFloat16:
      return divide_16bit<true>(buffer, count, divisor_f);
    case DataType::kFloat32:
      return divide_native<float>(buffer, count, divisor_f);
    case DataType::kFloat64:
      return divide_native<double>(buffer, count, static_cast<double>(divisor));
    case DataType::kBool:
      throw_bool("divide_buffer");
  }
  throw_unknown("divide_buffer", type);
}

}  // namespace runrun::cpu
