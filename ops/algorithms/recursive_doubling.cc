#include "ops/algorithms/recursive_doubling.h"

#include "ops/algorithms/group_fold.h"
#include "ops/algorithms/power_of_two_group.h"

namespace runrun::algorithms {

void allreduce_recursive_doubling(StepTransport& transport, void* data, size_t count,
                                  const Reduction& reduction, void* scratch) {
  if (transport.size() == 1 || count == 0) return;  // the same decision on every rank
  const PowerOfTwoGroup group(transport.rank(), transport.size());
  auto* mine = static_cast<char*>(data);
  auto* theirs = static_cast<char*>(scratch);
  const size_t bytes = count * reduction.element_size;
  fold_into_group(transport, group, mine, count, reduction, theirs);
  for (int mask = 1; mask < group.size; mask <<= 1) {
    if (group.folded) {  // idle, but in step with the others
      transport.step({}, {});
      continue;
    }
    const int partner_index = group.index ^ mask;
    const int partner = group.member(partner_index);
    transport.step({{partner, mine, bytes}}, {{partner, theirs, bytes}});
    combine_in_order(reduction, mine, theirs, count, group.index < partner_index);
  }
  unfold_from_group(transport, group, mine, bytes);
}

}  // namespace runrun::algorithms
