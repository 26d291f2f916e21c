#include "ops/algorithms/halving_doubling.h"

#include "ops/algorithms/group_fold.h"
#include "ops/algorithms/power_of_two_group.h"
#include "ops/base/block_layout.h"

namespace runrun::algorithms {

void allreduce_halving_doubling(StepTransport& transport, void* data, size_t count,
                                const Reduction& reduction, void* scratch) {
  if (transport.size() == 1 || count == 0) return;  // the same decision on every rank
  const PowerOfTwoGroup group(transport.rank(), transport.size());
  auto* buffer = static_cast<char*>(data);
  auto* received = static_cast<char*>(scratch);
  const size_t esize = reduction.element_size;
  fold_into_group(transport, group, buffer, count, reduction, received);
  // Block b (of group.size, as even as the count allows) ends up reduced on group place b.
  auto starts = offsets_of(even_split(count, static_cast<size_t>(group.size)));
  starts.push_back(count);
  const auto at = [&](int block) { return buffer + starts[static_cast<size_t>(block)] * esize; };
  const auto elements = [&](int first, int end) {
    return starts[static_cast<size_t>(end)] - starts[static_cast<size_t>(first)];
  };
  // Reduce-scatter: each step halves the blocks this rank is responsible for; it keeps the half
  // holding its own block and hands the other half to the partner, which does the opposite.
  int first = 0;
  int end = group.size;
  for (int mask = group.size / 2; mask >= 1; mask /= 2) {
    if (group.folded) {
      transport.step({}, {});
      continue;
    }
    const int partner_index = group.index ^ mask;
    const int partner = group.member(partner_index);
    const int middle = first + (end - first) / 2;
    const bool keep_lower = (group.index & mask) == 0;
    const int keep_first = keep_lower ? first : middle;
    const int keep_end = keep_lower ? middle : end;
    const int give_first = keep_lower ? middle : first;
    const int give_end = keep_lower ? end : middle;
    const size_t keep = elements(keep_first, keep_end);
    transport.step({{partner, at(give_first), elements(give_first, give_end) * esize}},
                   {{partner, received, keep * esize}});
    if (keep > 0) {
      combine_in_order(reduction, at(keep_first), received, keep, group.index < partner_index);
    }
    first = keep_first;
    end = keep_end;
  }
  // Allgather: each step doubles the run of reduced blocks this rank holds, swapping runs with
  // the partner whose run lies next to it.
  for (int mask = 1; mask < group.size; mask *= 2) {
    if (group.folded) {
      transport.step({}, {});
      continue;
    }
    const int partner_index = group.index ^ mask;
    const int partner = group.member(partner_index);
    const int mine = group.index / mask * mask;
    const int theirs = partner_index / mask * mask;
    transport.step({{partner, at(mine), elements(mine, mine + mask) * esize}},
                   {{partner, at(theirs), elements(theirs, theirs + mask) * esize}});
  }
  unfold_from_group(transport, group, buffer, count * esize);
}

}  // namespace runrun::algorithms
