#include "ops/algorithms/reducescatter.h"

#include <utility>

#include "ops/algorithms/recursive_doubling.h"
#include "ops/base/block_layout.h"

namespace runrun::algorithms {

void reducescatter_ring(StepTransport& transport, char* work, const std::vector<size_t>& counts,
                        const Reduction& reduction, char* received) {
  const int n = transport.size();
  const int me = transport.rank();
  const size_t esize = reduction.element_size;
  const auto starts = offsets_of(counts);
  const auto block = [&](int rank) {
    const auto p = static_cast<size_t>((rank % n + n) % n);
    return std::make_pair(work + starts[p] * esize, counts[p]);
  };
  // In step s a rank passes its running reduction of block (me - s - 1) to me + 1 and folds
  // the one of block (me - s - 2) from me - 1 into its own: after N-1 steps block `me` has
  // been through every rank, ending here.
  for (int s = 0; s + 1 < n; ++s) {
    const auto [out, out_count] = block(me - s - 1);
    const auto [in, in_count] = block(me - s - 2);
    transport.step({{(me + 1) % n, out, out_count * esize}},
                   {{(me - 1 + n) % n, received, in_count * esize}});
    if (in_count > 0) reduction.combine(in, received, in_count);
  }
}

void reducescatter_recursive_doubling(StepTransport& transport, char* work,
                                      const std::vector<size_t>& counts, const Reduction& reduction,
                                      char* scratch) {
  size_t total = 0;
  for (size_t count : counts) total += count;
  allreduce_recursive_doubling(transport, work, total, reduction, scratch);
}

}  // namespace runrun::algorithms
