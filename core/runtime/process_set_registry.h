#pragma once
// Why: one rank's table of process sets — every set's id and global ranks (members or not, so
// that any rank can name a set and its ranks) and, for the sets this rank belongs to, the
// background worker that runs their ops. Runtime enqueues through it, the peer health
// bookkeeping (PeerHealth) fails the workers of the sets a lost peer belongs to, and the
// process-set ops add and remove entries. Set 0, every rank, exists from construction.
// Threading contract: every method may be called from any thread; one mutex guards the table,
// and no method calls out (into a worker or a factory) while holding it. Ids are handed out
// by add(), which runs only on the global set's background thread, in the order every rank
// executes the agreed process-set ops: that is what makes ids equal on every rank. Workers are
// handed out as shared_ptr, so a worker removed meanwhile stays alive for whoever holds it.

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "core/runtime/process_set_worker.h"

namespace runrun {

class ProcessSetRegistry {
 public:
  using MakeWorker = std::function<std::shared_ptr<ProcessSetWorker>(int32_t id)>;

  // Registers the global set 0 (ranks 0..size-1) without a worker yet; `rank` is this rank,
  // named in errors.
  ProcessSetRegistry(int rank, int size);

  // Gives set 0 its worker (once, while the runtime is constructed); failed at once after
  // fail_all.
  void set_global_worker(std::shared_ptr<ProcessSetWorker> worker);

  // Throws InvalidArgumentError when a set with exactly these ranks exists (its id named).
  void check_unregistered(const std::vector<int>& ranks) const;
  // Registers a set with the next id (1, 2, ...; never reused) and returns it. `make_worker`
  // gets the id and returns this rank's worker, or nullptr when this rank is not a member;
  // it runs before the set becomes visible. After fail_all the worker fails at once. Global
  // set's background thread only.
  int32_t add(std::vector<int> ranks, const MakeWorker& make_worker);
  // Unregisters set `id` and returns its worker (nullptr for a non-member), which the caller
  // shuts down. Throws InvalidArgumentError for an unknown id or for set 0.
  std::shared_ptr<ProcessSetWorker> remove(int32_t id);

  // The worker of set `id`; throws InvalidArgumentError for an unknown set or one this rank is
  // not a member of, saying which.
  std::shared_ptr<ProcessSetWorker> worker(int32_t id) const;
  // The worker of set `id`, or nullptr (unknown set, non-member, or set 0 before its worker).
  std::shared_ptr<ProcessSetWorker> find_worker(int32_t id) const;
  // Global ranks of set `id`; throws InvalidArgumentError for an unknown id.
  std::vector<int> ranks(int32_t id) const;
  // This rank's rank within set `id`, or -1 when it is not a member or the set is unknown.
  int rank_in(int32_t id) const;

  // The workers of this rank's sets, in id order (set 0 first).
  std::vector<std::shared_ptr<ProcessSetWorker>> workers() const;
  // This rank's sets (id and worker) that global rank `member` belongs to, in id order.
  std::vector<std::pair<int32_t, std::shared_ptr<ProcessSetWorker>>> sets_with(int member) const;

  // Fails every worker of this rank (a lost peer: nothing can go on), and every worker that
  // add() registers from now on, with the same error: a set whose creation was under way when
  // the peer was lost must not outlive the loss.
  void fail_all(ErrorCode code, const std::string& message);

 private:
  int rank_;
  mutable std::mutex mutex_;
  std::map<int32_t, std::vector<int>> ranks_;                     // every set, member or not
  std::map<int32_t, std::shared_ptr<ProcessSetWorker>> workers_;  // the sets this rank is in
  int32_t next_id_ = 1;
  // Set by fail_all: every later worker fails at once.
  ErrorCode failed_code_ = ErrorCode::kOk;
  std::string failed_message_;
};

}  // namespace runrun
