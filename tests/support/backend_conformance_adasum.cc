// The conformance suite's Adasum checks (ops/adasum_allreduce.h over the backend under test):
// inputs for which Adasum's result is exact in every floating-point dtype, so the comparison is
// bitwise, and fused buffers whose halving boundaries cut through tensors.

#include <cmath>
#include <string>
#include <vector>

#include "common/errors.h"
#include "ops/adasum_allreduce.h"
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

// Tensor t of a fused buffer is "orthogonal" (rank r holds the elements with index % size == r,
// zeros elsewhere: Adasum is then the exact sum) for even t, "parallel" (scale_of(rank) times
// base_value) for odd t. Both kinds in one buffer check that each tensor has its own
// coefficients.
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
    for (size_t i = 0; i < tensor_counts[t]; ++i, ++at) {
      const int64_t v = base_value(i);
      if (t % 2 == 0) {
        const bool mine = static_cast<int>(i % static_cast<size_t>(size)) == rank;
        store(type, buffer.data(), at, mine ? v : 0);
        store(type, expected.data(), at, v);
      } else {
        store_double(type, buffer.data(), at, scale_of(rank) * static_cast<double>(v));
        store_double(type, expected.data(), at, combined * static_cast<double>(v));
      }
    }
  }
  adasum_allreduce(backend, buffer.data(), type, tensor_counts);
  std::string layout;
  for (size_t c : tensor_counts) layout += (layout.empty() ? "" : ",") + std::to_string(c);
  expect_equal(backend, "adasum of tensors [" + layout + "]", type, buffer.data(),
               expected.data(), total);
}

}  // namespace

void check_adasum(Backend& backend, const Options& options) {
  if (!adasum_supports_size(backend.size())) {
    bool threw = false;
    std::vector<char> one(8);
    try {
      adasum_allreduce(backend, one.data(), DataType::kFloat32, {1});
    } catch (const UnsupportedError&) {
      threw = true;
    }
    expect_true(backend, threw, "adasum over " + std::to_string(backend.size()) +
                                    " ranks: no UnsupportedError");
    return;
  }
  for (DataType type : kFloatTypes) {
    for (size_t count : options.sizes) {
      adasum_case(backend, type, {count});
      adasum_case(backend, type, {count, count + 3, 1, 0, count / 2 + 5});
    }
  }
}

}  // namespace runrun::conformance
