#pragma once
// Why: the one interface through which the core moves bytes between the ranks of a group. Each
// implementation lives in its own folder (mpi/, gloo/, nccl/, local/) with the same file set and
// passes the same conformance suite (tests/unit/backend_conformance_test.cc for local,
// tests/integration/backend_conformance_main.cc for the process-based ones).
//
// Threading contract: a Backend (and its ControlChannel) is driven by one thread at a time,
// the runtime's background thread; only abort() may be called from any other thread. Every
// collective blocks until this rank's part is complete and must be entered by every rank of the
// group in the same order with matching arguments (the core guarantees that by negotiation).
// Waiting must block or back off, never spin a core for long: ranks often oversubscribe cores.
//
// Errors: a lost peer or broken transport throws PeerFailureError naming the peer rank when it
// is known; a collective that passes the collective timeout throws TimeoutError; after abort()
// blocked and later calls throw ShutDownError; an op the backend lacks throws UnsupportedError.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/data_type.h"
#include "common/reduce_op.h"

namespace runrun {

// Where this rank sits: global rank/size; rank among the ranks on its host (local); and, as in
// Horovod, rank among the ranks that share its local_rank, i.e. the index of its host (cross).
struct Topology {
  int rank = 0;
  int size = 1;
  int local_rank = 0;
  int local_size = 1;
  int cross_rank = 0;
  int cross_size = 1;
};

// The small channel negotiation runs over; separate from data traffic (own communicator/tag
// space) so control messages never interleave with a collective's bytes.
class ControlChannel {
 public:
  virtual ~ControlChannel() = default;
  // Bitwise AND of `bits` across all ranks of the group, in place. Every rank passes the same
  // length. (OR is obtained by the caller storing bits inverted.)
  virtual void allreduce_and(std::vector<uint64_t>& bits) = 0;
  // Root returns every rank's bytes indexed by rank (its own included); others return {}.
  virtual std::vector<std::string> gather(const std::string& bytes, int root) = 0;
  // After the call every rank's `bytes` equals root's (any length).
  virtual void broadcast(std::string& bytes, int root) = 0;
};

class Backend {
 public:
  virtual ~Backend() = default;

  virtual std::string_view name() const = 0;
  virtual const Topology& topology() const = 0;
  int rank() const { return topology().rank; }
  int size() const { return topology().size; }

  // Reduces `count` elements of `type` across ranks into `out` on every rank. `in == out` means
  // in place. `op` is never kAverage (the core turns it into kSum plus a division).
  virtual void allreduce(const void* in, void* out, size_t count, DataType type, ReduceOp op);

  // Concatenates every rank's `in` (send_bytes long) into `out` in rank order: rank r's block
  // starts at the sum of recv_bytes[0..r). recv_bytes.size() == size(), recv_bytes[rank()] ==
  // send_bytes. `in` may point inside `out` at this rank's block (in place).
  virtual void allgatherv(const void* in, size_t send_bytes, void* out,
                          const std::vector<size_t>& recv_bytes);

  // Copies root's `bytes` bytes at `buffer` into `buffer` on every rank.
  virtual void broadcast(void* buffer, size_t bytes, int root);

  // Rank r sends send_bytes[p] bytes (consecutive blocks of `in`, in rank order) to every rank
  // p and receives recv_bytes[p] bytes from each rank p into consecutive blocks of `out`.
  virtual void alltoallv(const void* in, const std::vector<size_t>& send_bytes, void* out,
                         const std::vector<size_t>& recv_bytes);

  // `in` holds sum(recv_counts) elements on every rank; `out` receives the reduction across
  // ranks of block rank() (recv_counts[rank()] elements, blocks in rank order). op != kAverage.
  virtual void reducescatter(const void* in, void* out, const std::vector<size_t>& recv_counts,
                             DataType type, ReduceOp op);

  virtual void barrier();

  virtual ControlChannel& control() = 0;

  // Collective over every rank of this backend, each passing the same sorted `ranks` (global
  // ranks of this group). Members get a backend over just those ranks (ranks renumbered in the
  // given order); non-members get nullptr.
  virtual std::unique_ptr<Backend> create_subgroup(const std::vector<int>& ranks);

  // Makes blocked and later calls throw ShutDownError. The only method any thread may call; the
  // caller keeps the backend alive until abort() returns (the driving thread may be unblocked
  // by it and must not destroy the backend under it).
  virtual void abort() {}

 protected:
  [[noreturn]] void unsupported(std::string_view op) const;
};

}  // namespace runrun
