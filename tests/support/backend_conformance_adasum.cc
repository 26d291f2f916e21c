// The conformance suite's Adasum checks (ops/adasum/adasum_allreduce.h over the backend under
// test): inputs for which Adasum's result is exact in every floating-point dtype, so the comparison
// is bitwise, and fused buffers whose halving boundaries cut through tensors.

#include <cmath>
#include <string>
#include <vector>

#include "common/errors.h"
#include "ops/adasum/adasum_allreduce.h"
#include "tests/support/backend_conformance.h"
#include "tests/support/backend_conformance_values.h"

namespace runrun::conformance {
namespace {

constexpr DataType kFloatTypes[] = {DataType::kFloat16, DataType::kBFloat16, DataType::kFloat32,
                                    DataType::kFloat64};

// Small integers, some zero: the common direction of the "parallel" tensors.
int64_t base_value(size_t index) { return static_cast<int64_t>((index * 5 + 1) % 9) - 4; }

// Adasum of two parallel vectors x*v and y*v is c*v with c the same formula on the scalars
// (|v|^2 cancels); with x, y powers of two every step is exact.
double combine_scalars(double x, double y) {
  return (1.0 - x * y / (2.0 * x * x)) * x + (1.0 - x * y / (2.0 * y * y)) * y;
}

// The scalar of rank r's parallel tensor, and the tree of pairs Adasum combines them in.
double scale_of(int rank) { return std::ldexp(1.0, rank % 4); }
double adasum_of_scales(int size) {
  std::vector<double> level;
  for (int r = 0; r < size; ++r) level.push_back(scale_of(r));
  while (level.size() > 1) {
    std::vector<double> next;
    for (size_t i = 0; i < level.size(); i += 2) {
      next.push_back(combine_scalars(level[i], level[i + 1]));
    }
    level = next;
  }
  return level[0];
}

// The kinds of tensors, by position t in the fused buffer (t % 3), each exact in every dtype:
// - orthogonal: rank r holds the elements with index % size == r, zeros elsewhere: the sum;
// - parallel: scale_of(rank) times base_value: adasum_of_scales(size) times base_value;
// - mixed (two elements or more): e_0 on even ranks, e_0 + e_last on odd ones: level 0 gives
//   1.25 e_0 + 0.75 e_last, equal on every pair, which the later levels keep. Its first and last
//   elements fall in different halves at level 0, so it is right only when the ranks exchange
//   their partial dot products and norms (a slice of a parallel tensor has its whole ratio).
// All kinds in one buffer check that each tensor has its own coefficients.
void adasum_case(Backend& backend, DataType type, const std::vector<size_t>& tensor_counts) {
  const int rank = backend.rank();
  const int size = backend.size();
  const double combined = adasum_of_scales(size);
  size_t total = 0;
  for (size_t c : tensor_counts) total += c;
  std::vector<char> buffer(total * element_size(type) + 1);
  std::vector<char> expected(buffer.size());
  size_t at = 0;
  for (size_t t = 0; t < tensor_counts.size(); ++t) {
    const size_t last = tensor_counts[t] - 1;
    for (size_t i = 0; i < tensor_counts[t]; ++i, ++at) {
      const int64_t v = base_value(i);
      if (t % 3 == 2 && tensor_counts[t] >= 2) {
        const bool edge = i == 0 || i == last;
        const bool odd = rank % 2 == 1;
        store(type, buffer.data(), at, i == 0 || (odd && i == last) ? 1 : 0);
        if (size == 1) {
          store(type, expected.data(), at, i == 0 ? 1 : 0);
        } else {
          store_double(type, expected.data(), at, !edge ? 0.0 : (i == 0 ? 1.25 : 0.75));
        }
      } else if (t % 3 == 0) {
        const bool mine = static_cast<int>(i % static_cast<size_t>(size)) == rank;
        store(type, buffer.data(), at, mine ? v : 0);
        store(type, expected.data(), at, v);
      } else {
        store_double(type, buffer.data(), at, scale_of(rank) * static_cast<double>(v));
        store_double(type, expected.data(), at, combined * static_cast<double>(v));
      }
    }
  }
  AdasumScratch scratch;
  adasum_allreduce(backend, buffer.data(), type, tensor_counts, scratch);
  std::string layout;
  for (size_t c : tensor_counts) layout += (layout.empty() ? "" : ",") + std::to_string(c);
  expect_equal(backend, "adasum of tensors [" + layout + "]", type, buffer.data(), expected.data(),
               total);
}

}  // namespace

void check_adasum(Backend& backend, const Options& options) {
  if (!adasum_supports_size(backend.size())) {
    bool threw = false;
    std::vector<char> one(8);
    const size_t counts[] = {1};
    try {
      AdasumScratch scratch;
      adasum_allreduce(backend, one.data(), DataType::kFloat32, counts, scratch);
    } catch (const UnsupportedError&) {
      threw = true;
    }
    expect_true(backend, threw,
                "adasum over " + std::to_string(backend.size()) + " ranks: no UnsupportedError");
    return;
  }
  for (DataType type : kFloatTypes) {
    for (size_t count : options.sizes) {
      adasum_case(backend, type, {count});
      adasum_case(backend, type, {count, count + 3, count + 2, 1, 0, count / 2 + 5});
    }
  }
}

}  // namespace runrun::conformance
