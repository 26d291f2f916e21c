#pragma once
// Why: the shared state of N ranks that live as threads of one process, so the core's logic
// (negotiation, fusion, errors) can be unit-tested without processes or MPI. Every collective
// of the local backend is one `exchange`: each rank deposits a private copy of its
// contribution, waits until every rank of the group has deposited, and leaves with shared
// read-only views of all contributions, from which it computes its own result. Because inputs
// are copied first, in-place ops are safe, and because every rank reduces the contributions in
// rank order, every rank computes bit-identical results.
//
// Fault injection: fail_rank(r) marks r lost; every rank waiting on r (now or later) throws
// PeerFailureError naming r. A rank whose backend is aborted or times out is marked departed in
// the same way, so its peers never hang on it; a rank that gives up on an exchange takes its
// contribution back, so that exchange never completes without it.
//
// Threading contract: any thread may call any method. Waits block on a condition variable;
// nothing spins.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ops/backend.h"

namespace runrun {

struct LocalWorldOptions {
  // Ranks [k*ranks_per_host, (k+1)*ranks_per_host) pretend to share host k (for topology tests);
  // 0 means all ranks share one host (local_size = size, cross_size = 1).
  int ranks_per_host = 0;
  // A collective (or control exchange) that waits longer than this fails with TimeoutError;
  // 0 = no limit.
  std::chrono::milliseconds collective_timeout{0};
};

// The two independent rendezvous of a world: data collectives and the control channel never
// wait on each other, as with the separate communicators of a process backend.
enum class LocalChannel : int { kData = 0, kControl = 1 };

class LocalWorld : public std::enable_shared_from_this<LocalWorld> {
 public:
  using Blob = std::shared_ptr<const std::string>;

  explicit LocalWorld(int size, LocalWorldOptions options = {});
  // A world whose rank r lives on host `host_of_rank[r]` (used for subgroups).
  LocalWorld(std::vector<int> host_of_rank, LocalWorldOptions options);

  int size() const { return static_cast<int>(host_of_rank_.size()); }
  const LocalWorldOptions& options() const { return options_; }
  Topology topology_of(int rank) const;

  // Marks `rank` lost: ranks waiting on it, now or later, throw PeerFailureError naming it, and
  // calls by `rank` itself throw PeerFailureError. Propagates to subgroup worlds containing it.
  void fail_rank(int rank);

  // Marks `rank` as gone for `reason` (abort, timeout): peers waiting on it throw
  // PeerFailureError with the reason. Does not affect calls of `rank` itself.
  void depart(int rank, const std::string& reason);

  // Wakes every waiter so it re-checks its abort flag.
  void wake_all();

  struct ExchangeResult {
    uint64_t generation = 0;          // sequence number of this exchange on its channel
    std::vector<Blob> contributions;  // indexed by rank
  };

  // Deposits `contribution` for `rank` on `channel` and waits for every rank. `signature`
  // describes the call (op, dtype, count...) and must be equal on every rank, else every rank
  // throws MismatchError naming the differing ranks. `aborted` is the caller's abort flag
  // (ShutDownError). `op` names the operation in error messages.
  ExchangeResult exchange(LocalChannel channel, int rank, Blob contribution,
                          const std::string& signature, const std::atomic<bool>& aborted,
                          const char* op);

  // The world of a subgroup created by the exchange numbered `generation` on `channel` with
  // members `ranks` (global ranks of this world, sorted). Every member gets the same object;
  // the registry entry is dropped once every member has fetched it. The data backend and the
  // control channel each split their own world (their exchanges are numbered separately).
  std::shared_ptr<LocalWorld> subgroup_world(LocalChannel channel, uint64_t generation,
                                             const std::vector<int>& ranks);

 private:
  struct ChannelState {
    uint64_t generation = 0;
    int arrived = 0;
    std::vector<Blob> slots;
    std::vector<std::string> signatures;
    std::vector<bool> present;
    // Result of the last completed exchange, read by waiters after the generation advanced.
    std::vector<Blob> last_contributions;
    std::vector<std::string> last_signatures;
  };
  struct PendingSubgroup {
    std::shared_ptr<LocalWorld> world;
    int fetches_left = 0;
  };
  struct Child {
    std::weak_ptr<LocalWorld> world;
    std::vector<int> members;  // child rank -> this world's rank
  };

  // Throws if `rank` itself may not take part (failed), or a rank it waits on is gone.
  void check_peers_locked(const ChannelState& state, int rank, const char* op) const;
  // Marks `rank` gone for `reason` unless it already is.
  void mark_gone_locked(int rank, const std::string& reason);
  void check_signatures(const std::vector<std::string>& signatures, int rank, const char* op) const;

  std::vector<int> host_of_rank_;
  LocalWorldOptions options_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  ChannelState channels_[2];
  struct Gone {
    uint64_t order;  // the earliest loss is the root cause other losses follow from
    std::string reason;
  };
  std::vector<std::optional<Gone>> gone_;  // per rank: why it is gone, if it is
  uint64_t losses_ = 0;
  std::vector<bool> failed_;  // per rank: fail_rank was called
  std::map<std::pair<int, uint64_t>, PendingSubgroup> pending_subgroups_;  // (channel, generation)
  std::vector<Child> children_;
};

}  // namespace runrun
