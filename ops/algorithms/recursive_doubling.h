#pragma once
// Why: the latency-optimal allreduce for small buffers at any N: ceil(log2 N) steps, one
// message of the whole buffer per step (two more steps when N is not a power of two), where a
// direct exchange costs N-1 messages per rank. The Gloo backend's small allreduces beyond a few
// ranks and the control channel's negotiation rounds (issue 40).
// Threading contract: the rank's one driving thread; collective over the transport's ranks.

#include <cstddef>

#include "ops/algorithms/reduction.h"
#include "ops/algorithms/step_transport.h"

namespace runrun::algorithms {

// Allreduces `count` elements at `data` in place; every rank ends with the same bits (partners
// combine in group order). `scratch` holds `count` elements.
void allreduce_recursive_doubling(StepTransport& transport, void* data, size_t count,
                                  const Reduction& reduction, void* scratch);

}  // namespace runrun::algorithms
