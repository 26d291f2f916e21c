#pragma once
// Why: the step before and the step after a power-of-two algorithm when N is not a power of
// two (power_of_two_group.h): a folded rank's data joins its partner's, and the result goes
// back. Written once for recursive doubling and halving-doubling.
// Threading contract: the rank's one driving thread; collective (one step on every rank when
// the group has extra ranks, none otherwise).

#include <cstddef>

#include "ops/algorithms/power_of_two_group.h"
#include "ops/algorithms/reduction.h"
#include "ops/algorithms/step_transport.h"

namespace runrun::algorithms {

// Combines the data of two partners in group order, whichever of them this rank is: `mine` ends
// up holding lower (op) upper on both, the same bits (min and max of NaNs or signed zeros
// depend on the order). `theirs` is clobbered.
void combine_in_order(const Reduction& reduction, char* mine, char* theirs, size_t count,
                      bool mine_is_lower);

// Folded ranks hand their `count` elements at `data` to rank + 1, which combines them into its
// own (`scratch`: count elements).
void fold_into_group(StepTransport& transport, const PowerOfTwoGroup& group, char* data,
                     size_t count, const Reduction& reduction, char* scratch);

// Rank + 1 hands the result back to the folded rank.
void unfold_from_group(StepTransport& transport, const PowerOfTwoGroup& group, char* data,
                       size_t bytes);

}  // namespace runrun::algorithms
