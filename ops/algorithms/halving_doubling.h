#pragma once
// Why: the bandwidth-optimal allreduce for large buffers at any N (Rabenseifner's): a
// reduce-scatter by recursive halving, then an allgather by recursive doubling, 2 log2 N steps
// moving 2 (N-1)/N of the buffer per rank in all, as a ring does, but in log N steps instead
// of 2 (N-1). When N is not a power of two the folded ranks' whole buffers move once more each
// way (power_of_two_group.h). The Gloo backend's large allreduces beyond a few ranks (issue 40).
// Threading contract: the rank's one driving thread; collective over the transport's ranks.

#include <cstddef>

#include "ops/algorithms/reduction.h"
#include "ops/algorithms/step_transport.h"

namespace runrun::algorithms {

// Allreduces `count` elements at `data` in place; every rank ends with the same bits (each block
// is reduced on one rank, in group order, then copied to all). `scratch` holds `count` elements.
void allreduce_halving_doubling(StepTransport& transport, void* data, size_t count,
                                const Reduction& reduction, void* scratch);

}  // namespace runrun::algorithms
