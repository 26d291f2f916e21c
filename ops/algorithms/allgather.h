#pragma once
// Why: gathering every rank's block at every rank without N-1 messages per rank (the direct
// exchange): Bruck's algorithm takes ceil(log2 N) steps at any N, for small and medium
// buffers; the ring takes N-1 steps of one block each, one message in flight per link, for
// large ones. Both send every rank (N-1)/N of the gathered bytes, the least possible. The Gloo
// backend's allgather beyond a few ranks, and the broadcast's second half (issue 40).
// Threading contract: the rank's one driving thread; collective over the transport's ranks.

#include <vector>

#include "ops/algorithms/block_span.h"
#include "ops/algorithms/step_transport.h"

namespace runrun::algorithms {

// Fills every rank's block (spans[p], one span per rank, the same on every rank) of `buffer`
// from rank p; this rank's own block must already be in place. `scratch` holds the sum of all
// the spans' bytes.
void allgather_bruck(StepTransport& transport, char* buffer, const std::vector<BlockSpan>& spans,
                     char* scratch);

// The same in N-1 steps, straight into `buffer` (no scratch): in step s a rank passes the
// block of rank (rank - s) to rank + 1 and receives the block of rank (rank - s - 1).
void allgather_ring(StepTransport& transport, char* buffer, const std::vector<BlockSpan>& spans);

}  // namespace runrun::algorithms
