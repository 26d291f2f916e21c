#pragma once
// Why: a broadcast whose root does not send N-1 copies (the direct exchange): a binomial tree
// takes ceil(log2 N) steps of the whole buffer, for small buffers; for large ones the root
// scatters the buffer down the same tree (each rank gets 1/N) and a ring allgathers it, so no
// rank sends more than about twice the buffer whatever N (van de Geijn). The Gloo backend's
// broadcast beyond a few ranks (issue 40).
// Threading contract: the rank's one driving thread; collective over the transport's ranks.

#include <cstddef>

#include "ops/algorithms/step_transport.h"

namespace runrun::algorithms {

// Copies `bytes` at `data` on rank `root` to `data` on every rank.
void broadcast_binomial_tree(StepTransport& transport, char* data, size_t bytes, int root);
void broadcast_scatter_allgather(StepTransport& transport, char* data, size_t bytes, int root);

}  // namespace runrun::algorithms
