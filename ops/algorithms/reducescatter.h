#pragma once
// Why: a reduce-scatter without N-1 messages per rank (the direct exchange): for large buffers
// a ring, N-1 steps of one block each, which sends every rank (N-1)/N of the buffer, the least
// possible; for small ones recursive doubling of the whole buffer (ceil(log2 N) messages, where
// the round trips, not the bytes, are the cost). The Gloo backend's reducescatter beyond a few
// ranks (issue 40).
// Threading contract: the rank's one driving thread; collective over the transport's ranks.

#include <cstddef>
#include <vector>

#include "ops/algorithms/reduction.h"
#include "ops/algorithms/step_transport.h"

namespace runrun::algorithms {

// `work` holds this rank's input: counts[p] elements for rank p, one block after another in
// rank order (the same counts on every rank). Afterwards block `rank` of `work` holds the
// reduction over every rank of that block; the other blocks are clobbered. `received` holds
// the largest block.
void reducescatter_ring(StepTransport& transport, char* work, const std::vector<size_t>& counts,
                        const Reduction& reduction, char* received);

// The same by recursive doubling of the whole of `work` (every block ends reduced); `scratch`
// holds all of it.
void reducescatter_recursive_doubling(StepTransport& transport, char* work,
                                      const std::vector<size_t>& counts, const Reduction& reduction,
                                      char* scratch);

}  // namespace runrun::algorithms
