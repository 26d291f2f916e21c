#include "ops/algorithms/group_fold.h"

#include <cstring>

namespace runrun::algorithms {

void combine_in_order(const Reduction& reduction, char* mine, char* theirs, size_t count,
                      bool mine_is_lower) {
  if (mine_is_lower) {
    reduction.combine(mine, theirs, count);
    return;
  }
  reduction.combine(theirs, mine, count);
  std::memcpy(mine, theirs, count * reduction.element_size);
}

void fold_into_group(StepTransport& transport, const PowerOfTwoGroup& group, char* data,
                     size_t count, const Reduction& reduction, char* scratch) {
  if (group.extra == 0) return;
  const int rank = transport.rank();
  const size_t bytes = count * reduction.element_size;
  if (group.folded) {
    transport.step({{rank + 1, data, bytes}}, {});
  } else if (rank < 2 * group.extra) {
    transport.step({}, {{rank - 1, scratch, bytes}});
    combine_in_order(reduction, data, scratch, count, false);
  } else {
    transport.step({}, {});
  }
}

void unfold_from_group(StepTransport& transport, const PowerOfTwoGroup& group, char* data,
                       size_t bytes) {
  if (group.extra == 0) return;
  const int rank = transport.rank();
  if (group.folded) {
    transport.step({}, {{rank + 1, data, bytes}});
  } else if (rank < 2 * group.extra) {
    transport.step({{rank - 1, data, bytes}}, {});
  } else {
    transport.step({}, {});
  }
}

}  // namespace runrun::algorithms
