#pragma once
// Why: the arithmetic of Horovod's op=Adasum on one pair of vector pieces, kept apart from the
// communication (ops/adasum/adasum_allreduce.h) so each dtype's arithmetic has one definition
// and can be tested alone. Adasum combines two gradients a and b of one tensor as
//   (1 - a.b / (2 |a|^2)) a + (1 - a.b / (2 |b|^2)) b
// (a coefficient is 1 where its squared norm is below sqrt(DBL_MIN), about 1.5e-154, as in
// Horovod's adasum.h), with a.b, |a|^2 and
// |b|^2 taken over the whole tensor: callers sum the partial products of their pieces first.
// Floating-point types only (float16, bfloat16, float32, float64); products and sums are
// computed in double, float16/bfloat16 results rounded back per element.
// Thread-safety: pure functions over caller-owned buffers.

#include <cstddef>
#include <type_traits>

#include "common/data_type.h"

namespace runrun::cpu {

// The dot product of a and b and their squared norms over `count` elements.
struct DotAndNorms {
  double dot = 0.0;
  double a_norm_sq = 0.0;
  double b_norm_sq = 0.0;
};
// Exchanged between ranks as raw bytes (ops/adasum/adasum_allreduce.cc).
static_assert(sizeof(DotAndNorms) == 3 * sizeof(double) &&
              std::is_trivially_copyable_v<DotAndNorms>);

// Throws InvalidArgumentError for a type that is not floating-point.
DotAndNorms dot_and_norms(const void* a, const void* b, size_t count, DataType type);

// The two coefficients of the combination, from the whole tensor's dot product and norms.
struct AdasumCoefficients {
  double a = 1.0;
  double b = 1.0;
};
AdasumCoefficients adasum_coefficients(const DotAndNorms& whole);

// out[i] = a_coeff * a[i] + b_coeff * b[i] for i < count; `out` may be `a` or `b`.
// Throws InvalidArgumentError for a type that is not floating-point.
void scaled_add(void* out, const void* a, double a_coeff, const void* b, double b_coeff,
                size_t count, DataType type);

}  // namespace runrun::cpu
