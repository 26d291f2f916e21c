#pragma once
// Why: the Backend's collectives (and the control channel's exchanges) for a group whose ranks
// all share one host, built from Group::step (shm_group.h): every byte moves by memcpy through
// the shared segment instead of through TCP loopback. Arguments are checked by the caller (the
// backend, with backend_checks) before it delegates here; semantics are Backend's (backend.h).
// Buffers larger than a slot move in slot-sized pieces, one (or two) steps per piece.
// Reductions go through the ops/cpu kernels in rank order (rank 0's data first, then the
// others), each element reduced by one rank and copied to the others: every rank gets the same
// bits.
// Threading contract: the group's driving thread.

#include <cstddef>
#include <string>
#include <vector>

#include "common/data_type.h"
#include "common/reduce_op.h"
#include "ops/shm/shm_group.h"

namespace runrun::shm {

// In place: `data` holds `count` elements on every rank and the reduction after. Up to
// kOneStepBytes: one step (every rank reduces every rank's buffer). Above: pieces of capacity()
// bytes, each a reduce-scatter step (every rank copies the slices the others reduce into its
// slot; rank p reduces slice p from the others' slots and its own buffer, into the buffer and
// its next slot) and an allgather step (every rank copies the others' slices out). Only with
// kSingleCopyMinRanks ranks or more and group.single_copy() (opt-in): three steps for the whole
// buffer (every rank's address; each rank reads its slice from every peer's buffer with
// process_vm_readv, 64 KiB at a time, and reduces it in rank order into its own buffer; each
// rank reads the others' reduced slices from their buffers; a last step so no buffer is
// released while a peer still reads it).
// Every bulk copy is cpu::copy_bytes, whatever the buffers' alignment (ops/cpu/copy_bytes.h).
void allreduce(Group& group, void* data, size_t count, DataType type, ReduceOp op);
inline constexpr size_t kOneStepBytes = size_t{64} << 10;
// History (docs/perf-notes/gloo.md): single copy was the default at 3+ ranks while the slot path's
// memcpy hit glibc's relative-alignment cliff (copy_bytes.h); with copy_bytes the slots take
// 30-55% less CPU per rank than single copy at 4 ranks from 1 MiB to 64 MiB, and
// process_vm_readv's page pinning and slower kernel copy no longer pay for the saved copy.
inline constexpr int kSingleCopyMinRanks = 3;

void broadcast(Group& group, void* buffer, size_t bytes, int root);
void allgatherv(Group& group, const void* in, size_t send_bytes, void* out,
                const std::vector<size_t>& recv_bytes);
void alltoallv(Group& group, const void* in, const std::vector<size_t>& send_bytes, void* out,
               const std::vector<size_t>& recv_bytes);
void reducescatter(Group& group, const void* in, void* out, const std::vector<size_t>& recv_counts,
                   DataType type, ReduceOp op);
void barrier(Group& group);

// Every rank's `mine` (any length, may differ), indexed by rank; `op` names the call in errors.
std::vector<std::string> allgather_strings(Group& group, const char* op, const std::string& mine);

}  // namespace runrun::shm
