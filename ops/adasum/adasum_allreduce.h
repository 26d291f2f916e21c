#pragma once
// Why: Horovod's op=Adasum (adaptive summation: each pair of gradients is combined so that
// their common direction counts once, ops/cpu/adasum_kernels.h) over any Backend, so it works
// the same over MPI, Gloo, local and the hierarchical forms without point-to-point calls in the
// Backend interface. The pairing is Horovod's vector-halving, distance-doubling tree: at level k
// each rank pairs with rank ^ 2^k, keeps half of its current piece and receives its partner's
// values of that half (one alltoallv with one non-empty block), and the 2^(k+1) ranks that now
// hold pieces of the same two partial results add up their per-tensor dot products and norms
// (one allgather of 3 doubles per tensor); after log2(size) levels each rank holds one piece of
// the result, and the same pairs swap their pieces back up the tree (log2(size) more alltoallv,
// in place) until every rank holds the whole vector. Each tensor of a fused buffer gets its own
// coefficients, as in Horovod.
// Threading contract: a collective over `backend`, called by the thread that drives it (the
// process set's worker), every rank with the same counts and type; it blocks until done and
// throws what the backend's operations throw (PeerFailureError, ShutDownError, TimeoutError).

#include <cstddef>
#include <span>
#include <vector>

#include "common/data_type.h"
#include "ops/backend.h"
#include "ops/cpu/adasum_kernels.h"

namespace runrun {

// True when Adasum can run over `size` ranks: a power of two (Horovod's condition).
bool adasum_supports_size(int size);

// Buffers adasum_allreduce keeps between calls (the half it receives, the exchanged dot
// products), so a training loop does not allocate and fault in half a bucket per step. One per
// driving thread; it only grows (to half the largest bucket reduced with Adasum).
struct AdasumScratch {
  std::vector<std::byte> received;
  std::vector<size_t> send_bytes;
  std::vector<size_t> recv_bytes;
  std::vector<cpu::DotAndNorms> partial;
  std::vector<cpu::DotAndNorms> everyone;
};

// Replaces the host buffer `buffer` (the tensors of `tensor_counts` elements each, back to back,
// of floating-point `type`) by their Adasum over the ranks of `backend`. UnsupportedError for a
// size that is not a power of two or a type that is not floating-point (before anything is
// sent; the same on every rank).
void adasum_allreduce(Backend& backend, void* buffer, DataType type,
                      std::span<const size_t> tensor_counts, AdasumScratch& scratch);

}  // namespace runrun
