#pragma once
// Why: negotiation — deciding, identically on every rank of a process set, which enqueued
// tensors are ready everywhere and in which order they run. One round is:
//   1. one AND-allreduce of a bit vector: a bit per response-cache slot this rank is ready for
//      (steady state needs nothing else), plus inverted bits (so AND gives OR) for "this slot
//      is stale here", "I have uncached requests", "I am shutting down" and "I have joined";
//   2. only if some rank has uncached or stale requests: gather them at the coordinator (rank 0
//      of the set), which matches them across ranks (MessageTable), and broadcast its responses.
// Ready = agreed cache hits in slot order, then the coordinator's responses in its order.
// Thread-safety: owned by the process set's background thread.

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/debug_checks.h"
#include "common/logging.h"
#include "core/runtime/config.h"
#include "core/negotiation/message_table.h"
#include "core/negotiation/response_cache.h"
#include "core/negotiation/response_list.h"
#include "core/runtime/tensor_queue.h"
#include "core/timeline/timeline.h"
#include "ops/backend.h"

namespace runrun {

class Controller {
 public:
  // `timeline` may be null; it must outlive the controller.
  Controller(ControlChannel& channel, int rank, int size, const Config& config, Logger logger,
             Timeline* timeline);

  // Takes ownership of newly enqueued entries, leaving `entries` empty (its capacity kept).
  void add(std::vector<std::unique_ptr<TensorEntry>>& entries);
  bool has_pending() const { return !pending_.empty(); }
  // The pending names into the first strings of `names`, reusing their storage; returns how
  // many. `names` only grows: a round with fewer pending ops (a barrier's) then frees no string
  // the next round with many would allocate again (the worker records them every round).
  size_t pending_names(std::vector<std::string>& names) const;

  struct Round {
    ResponseList ready;          // cache hits borrowed from the cache: valid until the next round
    bool peer_shutdown = false;  // some rank is shutting down: every rank stops
    std::vector<int> shutting_down;  // then: which ranks of the set (for the others' message)
    // A stall outlived RUNRUN_STALL_SHUTDOWN_TIME: after `ready` ran, every rank of this round
    // stops its worker with this message (Horovod's stall shutdown).
    std::string stall_shutdown;
  };
  // Runs one round (a collective over the set's control channel). The round's responses stay
  // valid until the next call.
  Round negotiate(bool shutting_down);

  // Hands the entry of an agreed response to the executor; nullptr when this rank has none.
  std::unique_ptr<TensorEntry> take(const std::string& name);
  std::vector<std::unique_ptr<TensorEntry>> take_all();

  const ResponseCache& cache() const { return cache_; }
  // Counters for tests and logs (any thread may read them).
  size_t cache_hits() const { return cache_hits_; }
  size_t coordinator_rounds() const { return coordinator_rounds_; }
  size_t negotiation_rounds() const { return negotiation_rounds_; }  // every negotiate()

 private:
  // The last exchange of a round in which some rank shuts down: which ranks of the set do.
  std::vector<int> ranks_shutting_down(bool shutting_down);
  // Erases the slots stale on some rank (their entries go to the coordinator); any erased?
  bool drop_stale_slots(const std::vector<uint64_t>& bits, size_t words, size_t slots);
  // The cache hits every rank is ready for, in slot order, into `ready`.
  void take_agreed_hits(const std::vector<uint64_t>& bits, ResponseList& ready);

  // A cache hit of this round: the response-cache slot and this rank's entry (null once the
  // hit was moved to the coordinator's list).
  struct Hit {
    size_t slot;
    TensorEntry* entry;
  };
  bool joined() const;  // this rank's join is pending
  // Removes the entries whose `unsent` mark was cleared from unsent_ (one pass, order kept).
  void drop_sent();
  void keep_groups_together(std::vector<Hit>& hits, std::vector<TensorEntry*>& uncached) const;
  // Sorts unsent_ into hits_ (by slot) and uncached_, setting this rank's bits. A hit that
  // waited on the cache path for cache_wait_limit_ is sent as stale instead.
  void classify(std::vector<uint64_t>& bits, size_t words);
  std::vector<Response> coordinate(const std::vector<TensorEntry*>& uncached,
                                   std::string& stall_shutdown);
  std::string coordinator_answer(const std::vector<std::string>& gathered);
  void inspect_stalls(std::vector<Response>& responses);
  bool stall_inspection_due() const;

  ControlChannel& channel_;
  int rank_;
  int size_;
  const Config& config_;
  Logger logger_;
  Timeline* timeline_;
  ResponseCache cache_;
  MessageTable table_;  // used on the coordinator only
  // Keyed by views of each entry's own request.name with its name_hash (the entry is on the
  // heap and outlives its key here): a pending tensor costs no copy of its name and no second
  // hash. Unordered: nothing depends on the order of pending_ (the order of a round comes from
  // unsent_ and the cache's slots).
  using Pending = std::unordered_map<HashedName, std::unique_ptr<TensorEntry>, NameHash, NameEqual>;
  Pending pending_;
  // Nodes of pending_ that take() removed, for the next add(): a burst of a hundred entries
  // would otherwise allocate a hundred nodes and free them a round later, past the thread's
  // malloc cache.
  std::vector<Pending::node_type> spare_nodes_;
  static constexpr size_t kMaxSpareNodes = 4096;
  // A node keyed `name`: a spare one, or a new one.
  Pending::node_type spare_node(const HashedName& name);
  // Pending entries not yet agreed or sent to the coordinator, in enqueue order (each marked
  // TensorEntry::unsent); owned by pending_.
  std::vector<TensorEntry*> unsent_;
  // The coordinator's cacheable answers of the last round with this rank's requests: cached at
  // the start of the next negotiate(), once the round that borrowed cache entries has run.
  std::vector<std::pair<Response, Request>> to_cache_;
  // negotiate()'s scratch, reused: no allocation per round in steady state.
  std::vector<Hit> hits_;
  // The background thread, which alone may call add(), negotiate() and take() (checked in
  // builds with RUNRUN_DEBUG_CHECKS: common/debug_checks.h).
  OwnerThread owner_;
  std::vector<TensorEntry*> uncached_;
  std::map<std::string, std::chrono::steady_clock::time_point, std::less<>> stall_warned_;
  std::chrono::steady_clock::time_point last_stall_inspection_{};
  // How long a tensor may wait on the cache path (its slot ready here, not everywhere) before
  // its slot is marked stale on every rank and it goes to the coordinator, where the stall
  // inspection sees it: the first of the stall warning and shutdown times; zero (never) when
  // both are off. Without it, two ranks waiting on different cached tensors would wait for
  // ever unseen (Horovod invalidates such cache entries too).
  std::chrono::steady_clock::duration cache_wait_limit_{};
  std::atomic<size_t> cache_hits_{0};
  std::atomic<size_t> coordinator_rounds_{0};
  std::atomic<size_t> negotiation_rounds_{0};
};

}  // namespace runrun
