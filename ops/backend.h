#pragma once
// Why: the one interface through which the core moves bytes between the ranks of a group. Each
// implementation lives in its own folder (mpi/, gloo/, local/; each has its <name>_backend,
// <name>_control_channel and <name>_provider files, the rest is its own), registers a provider
// (ops/registry/backend_provider.h) and passes the same conformance suite (tests/support/
// backend_conformance.h: over local and gloo as ranks in threads in tests/unit/ops, over mpi as
// processes in tests/integration/ops).
//
// Backend v2 (docs/backends.md "Backend v2 contract"):
// - A collective takes buffers that say which device their memory is on (DeviceBuffer, a
//   DLPack DLDevice) and returns a Completion (ops/completion.h) instead of blocking: MPI
//   completes it from its posted requests; gloo and local run the operation on the calling
//   thread and return a completed one; a GPU backend will complete it from a CUDA event. A
//   backend refuses a buffer on a device it cannot address with UnsupportedError naming the
//   device and the op (backend_checks::check_device). The blocking calls (allreduce(), ...)
//   are start + wait over host memory, for tests and simple callers.
// - The ControlChannel negotiation runs over is a separate object with its own owner and
//   lifetime: create_control_channel() makes one over this backend's transport and ranks, and
//   a channel splits itself for process sets (ControlChannel::create_subgroup), so the core can
//   negotiate over one transport (always on the CPU) while data moves over another (e.g. NCCL
//   data with an MPI or Gloo control channel).
//
// Threading contract: a Backend (and each ControlChannel) is driven by one thread at a time:
// the thread that creates the runtime drives the global control channel until the global
// worker starts (the peer monitor's address exchange); then the background thread of the
// process set (a set's backend is created on the global worker's thread, then handed to the
// set's own worker). name(), topology(), rank() and size() are immutable after construction and
// may be read from any thread; abort() may be called from any thread; nothing else may. Every
// collective must be started by every rank of the group in the same order with matching arguments
// (the core guarantees that by negotiation). Several operations may be outstanding at once; each
// completion is waited for by the driving thread. Waiting must block or back off, never spin a core
// for long: ranks often oversubscribe cores.
//
// Errors: start_* throws at once for what is wrong before anything is sent (InvalidArgumentError
// for bad arguments, checked identically by every backend in ops/base/backend_checks.cc;
// UnsupportedError for an op or device the backend lacks; ShutDownError after abort(); the
// earlier error of a broken backend). What goes wrong while the operation runs comes from its
// Completion: a lost peer or broken transport throws PeerFailureError naming the peer rank when
// the transport can tell (gloo, local; MPI cannot: its collective waits until the runtime's peer
// monitor aborts it, ShutDownError, or the collective timeout passes, and its PeerFailureError
// comes only from an MPI error code); a collective that passes the collective timeout throws
// TimeoutError (and later calls throw it again); abort() makes a pending one throw ShutDownError
// (an operation that completed just before may still return normally); ranks that disagree
// throw MismatchError where the backend can tell.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/data_type.h"
#include "common/reduce_op.h"
#include "ops/completion.h"
#include "ops/device.h"

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
  // Every host has the same number of ranks (Horovod's is_homogeneous()).
  bool homogeneous = true;
};

// The small channel negotiation runs over: host memory only, blocking calls (negotiation needs
// each answer before it can go on). Its own object with its own connections (communicator, tag
// space, sockets), so control messages never interleave with a collective's bytes, it can be
// of another transport than the data backend, and its lifetime is its owner's (the process
// set's worker), not the data backend's.
// Threading contract: one driving thread; abort() from any thread (the owner keeps the channel
// alive until abort() returns). Calls block or back off, never spin.
class ControlChannel {
 public:
  virtual ~ControlChannel() = default;
  // Bitwise AND of `bits` across all ranks of the group, in place. Every rank passes the same
  // length. (OR is obtained by the caller storing bits inverted.)
  virtual void allreduce_and(std::vector<uint64_t>& bits) = 0;
  // The same for the negotiation's rounds, which follow one another with bits of a length that
  // rarely changes: a channel may post the next round's receives when a round ends (gloo does,
  // saving a round trip a round). Other callers use allreduce_and.
  virtual void round_allreduce_and(std::vector<uint64_t>& bits) { allreduce_and(bits); }
  // Root returns every rank's bytes indexed by rank (its own included); others return {}.
  virtual std::vector<std::string> gather(const std::string& bytes, int root) = 0;
  // After the call every rank's `bytes` equals root's (any length).
  virtual void broadcast(std::string& bytes, int root) = 0;

  // Collective over every rank of this channel, each passing the same sorted `ranks` (ranks of
  // this channel's group). Members get a channel over just those ranks (renumbered in the given
  // order) and of the same transport; non-members get nullptr. Ranks that pass different lists
  // all get MismatchError.
  virtual std::unique_ptr<ControlChannel> create_subgroup(const std::vector<int>& ranks) = 0;

  // Makes blocked and later calls throw ShutDownError. The only method any thread may call.
  virtual void abort() = 0;
};

class Backend {
 public:
  using CompletionPtr = std::unique_ptr<Completion>;

  virtual ~Backend();

  virtual std::string_view name() const = 0;
  virtual const Topology& topology() const = 0;
  int rank() const { return topology().rank; }
  int size() const { return topology().size; }

  // --- Collectives: start the operation, return its completion (see the file comment). ---

  // Reduces `count` elements of `type` across ranks into `out` on every rank. `in.data ==
  // out.data` means in place. `op` is never kAverage (the core turns it into kSum plus a
  // division).
  virtual CompletionPtr start_allreduce(ConstDeviceBuffer in, DeviceBuffer out, size_t count,
                                        DataType type, ReduceOp op);

  // Concatenates every rank's `in` (send_bytes long) into `out` in rank order: rank r's block
  // starts at the sum of recv_bytes[0..r). recv_bytes.size() == size(), recv_bytes[rank()] ==
  // send_bytes. `in` may point inside `out` at this rank's block (in place).
  virtual CompletionPtr start_allgatherv(ConstDeviceBuffer in, size_t send_bytes, DeviceBuffer out,
                                         const std::vector<size_t>& recv_bytes);

  // Copies root's `bytes` bytes at `buffer` into `buffer` on every rank.
  virtual CompletionPtr start_broadcast(DeviceBuffer buffer, size_t bytes, int root);

  // Rank r sends send_bytes[p] bytes (consecutive blocks of `in`, in rank order) to every rank
  // p and receives recv_bytes[p] bytes from each rank p into consecutive blocks of `out`.
  virtual CompletionPtr start_alltoallv(ConstDeviceBuffer in, const std::vector<size_t>& send_bytes,
                                        DeviceBuffer out, const std::vector<size_t>& recv_bytes);

  // `in` holds sum(recv_counts) elements on every rank; `out` receives the reduction across
  // ranks of block rank() (recv_counts[rank()] elements, blocks in rank order). op != kAverage.
  virtual CompletionPtr start_reducescatter(ConstDeviceBuffer in, DeviceBuffer out,
                                            const std::vector<size_t>& recv_counts, DataType type,
                                            ReduceOp op);

  virtual CompletionPtr start_barrier();

  // --- Blocking forms over host memory: start + wait. ---
  void allreduce(const void* in, void* out, size_t count, DataType type, ReduceOp op);
  void allgatherv(const void* in, size_t send_bytes, void* out,
                  const std::vector<size_t>& recv_bytes);
  void broadcast(void* buffer, size_t bytes, int root);
  void alltoallv(const void* in, const std::vector<size_t>& send_bytes, void* out,
                 const std::vector<size_t>& recv_bytes);
  void reducescatter(const void* in, void* out, const std::vector<size_t>& recv_counts,
                     DataType type, ReduceOp op);
  void barrier();

  // Collective over every rank of this backend: a new control channel over the same ranks and
  // this backend's transport, owned by the caller and independent of this backend (either may
  // be destroyed first; aborting one does not abort the other). A backend whose transport
  // cannot carry control traffic (a GPU-only one) throws UnsupportedError: its user pairs it
  // with another transport's channel.
  virtual std::unique_ptr<ControlChannel> create_control_channel();

  // A control channel kept by this backend, created by create_control_channel() on the first
  // call (so that first call is collective: every rank makes it at the same point of its
  // sequence of calls). For tests and tools that drive a backend alone; the runtime owns its
  // channels itself. abort() aborts it too.
  ControlChannel& control();

  // Collective over every rank of this backend, each passing the same sorted `ranks` (global
  // ranks of this group). Members get a backend over just those ranks (ranks renumbered in the
  // given order); non-members get nullptr.
  virtual std::unique_ptr<Backend> create_subgroup(const std::vector<int>& ranks);

  // Makes blocked and later calls (and pending completions) throw ShutDownError. The only
  // method any thread may call; the caller keeps the backend alive until abort() returns (the
  // driving thread may be unblocked by it and must not destroy the backend under it).
  void abort();

 protected:
  // What abort() does to the transport (the kept control channel is aborted by abort()).
  virtual void abort_transport() {}
  [[noreturn]] void unsupported(std::string_view op) const;

 private:
  std::unique_ptr<ControlChannel> control_;          // the driving thread's
  std::atomic<ControlChannel*> published_{nullptr};  // control_, for abort() from any thread
  std::atomic<bool> aborted_{false};
};

// What a process set's worker runs on: the channel it negotiates over and the backend its data
// moves over. Two objects with two owners' worth of independence: they may be of different
// transports (a GPU data backend with a CPU control channel), each is aborted and destroyed on
// its own, and each splits itself for process sets (create_subgroup on both, control first).
struct Transport {
  std::unique_ptr<ControlChannel> control;
  std::unique_ptr<Backend> data;
};

// Negotiation over the data backend's own transport: its create_control_channel() (collective).
Transport transport_over(std::unique_ptr<Backend> data);

}  // namespace runrun
