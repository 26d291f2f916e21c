#include "ops/cpu/adasum_kernels.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "common/errors.h"
#include "ops/cpu/half.h"

namespace runrun::cpu {
namespace {

// An element as double and back, per storage type.
template <typename T>
struct Element {
  static double load(T v) { return static_cast<double>(v); }
  static T store(double v) { return static_cast<T>(v); }
};
struct Half {
  uint16_t bits;
};
struct BFloat16 {
  uint16_t bits;
};
template <>
struct Element<Half> {
  static double load(Half v) { return half_to_float(v.bits); }
  static Half store(double v) { return {float_to_half(static_cast<float>(v))}; }
};
template <>
struct Element<BFloat16> {
  static double load(BFloat16 v) { return bfloat16_to_float(v.bits); }
  static BFloat16 store(double v) { return {float_to_bfloat16(static_cast<float>(v))}; }
};

// Four independent partial sums per quantity (elements i % 4), added at the end: the loop is
// not one chain of dependent additions, so it runs at the throughput of the multiplies.
template <typename T>
DotAndNorms dot_and_norms_of(const void* a, const void* b, size_t count) {
  constexpr size_t kLanes = 4;
  const T* x = static_cast<const T*>(a);
  const T* y = static_cast<const T*>(b);
  double dot[kLanes] = {}, aa[kLanes] = {}, bb[kLanes] = {};
  size_t i = 0;
  for (; i + kLanes <= count; i += kLanes) {
    for (size_t k = 0; k < kLanes; ++k) {
      const double u = Element<T>::load(x[i + k]);
      const double v = Element<T>::load(y[i + k]);
      dot[k] += u * v;
      aa[k] += u * u;
      bb[k] += v * v;
    }
  }
  for (size_t k = 0; i < count; ++i, ++k) {
    const double u = Element<T>::load(x[i]);
    const double v = Element<T>::load(y[i]);
    dot[k] += u * v;
    aa[k] += u * u;
    bb[k] += v * v;
  }
  DotAndNorms d;
  for (size_t k = 0; k < kLanes; ++k) {
    d.dot += dot[k];
    d.a_norm_sq += aa[k];
    d.b_norm_sq += bb[k];
  }
  return d;
}

template <typename T>
void scaled_add_of(void* out, const void* a, double a_coeff, const void* b, double b_coeff,
                   size_t count) {
  T* o = static_cast<T*>(out);
  const T* x = static_cast<const T*>(a);
  const T* y = static_cast<const T*>(b);
  for (size_t i = 0; i < count; ++i) {
    o[i] = Element<T>::store(a_coeff * Element<T>::load(x[i]) + b_coeff * Element<T>::load(y[i]));
  }
}

[[noreturn]] void not_floating(DataType type) {
  throw InvalidArgumentError(RUNRUN_WHERE, "Adasum combines floating-point tensors only, not " +
                                               std::string(data_type_name(type)));
}

}  // namespace

DotAndNorms dot_and_norms(const void* a, const void* b, size_t count, DataType type) {
  switch (type) {
    case DataType::kFloat16:
      return dot_and_norms_of<Half>(a, b, count);
    case DataType::kBFloat16:
      return dot_and_norms_of<BFloat16>(a, b, count);
    case DataType::kFloat32:
      return dot_and_norms_of<float>(a, b, count);
    case DataType::kFloat64:
      return dot_and_norms_of<double>(a, b, count);
    default:
      not_floating(type);
  }
}

AdasumCoefficients adasum_coefficients(const DotAndNorms& whole) {
  // Horovod's threshold (its adasum.h): a squared norm below sqrt(DBL_MIN) counts as zero, so
  // tiny but representable gradients are still averaged where parallel, not summed.
  const double tiny = std::sqrt(std::numeric_limits<double>::min());
  AdasumCoefficients c;
  if (whole.a_norm_sq >= tiny) c.a = 1.0 - whole.dot / whole.a_norm_sq * 0.5;
  if (whole.b_norm_sq >= tiny) c.b = 1.0 - whole.dot / whole.b_norm_sq * 0.5;
  return c;
}

void scaled_add(void* out, const void* a, double a_coeff, const void* b, double b_coeff,
                size_t count, DataType type) {
  switch (type) {
    case DataType::kFloat16:
      return scaled_add_of<Half>(out, a, a_coeff, b, b_coeff, count);
    case DataType::kBFloat16:
      return scaled_add_of<BFloat16>(out, a, a_coeff, b, b_coeff, count);
    case DataType::kFloat32:
      return scaled_add_of<float>(out, a, a_coeff, b, b_coeff, count);
    case DataType::kFloat64:
      return scaled_add_of<double>(out, a, a_coeff, b, b_coeff, count);
    default:
      not_floating(type);
  }
}

}  // namespace runrun::cpu
