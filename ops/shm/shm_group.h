#pragma once
// Why: the ranks of a group that all run on one host move bytes through one shared segment
// instead of TCP loopback (as Open MPI's vader next to its TCP BTL): this is that group and
// its one synchronisation primitive, the step, which every collective of shm_collectives.h
// is built from. In a step every rank writes up to capacity() bytes into its own slot,
// publishes the step (its counter in the segment) and waits until every peer has published
// it; then it may read every rank's slot of that step. Each rank has two slots and uses them in
// alternate steps: a peer publishes step k+1 only after it finished reading step k, so when a
// rank has seen every peer publish step k+1 its slot of step k is free again — one counter per
// rank, no second "done reading" round. Every publication also adds 1 to the group's arrival
// counter (shm_layout.h), and a waiter sleeps on that one word until it reaches size * k: only
// the arrival that completes the step wakes anyone, so a waiting rank is woken once per step,
// not once per peer that arrives after it (with more ranks than cores each wake-up is a
// context switch; see docs/perf-notes/gloo.md).
//
// Failure model: a rank leaving the group (abort(), a failure, its destructor) marks itself
// gone in the segment and wakes its waiters, so peers fail at once with PeerFailureError
// naming it, as a closed TCP connection does; a peer whose process died (same pid namespace)
// is named the same way; a step not done by the operation's deadline (the collective timeout)
// throws TimeoutError naming the peer waited for; abort() (any thread) makes a blocked and
// every later call throw ShutDownError. After a timeout or peer failure the group is broken:
// later calls throw that again.
// Threading contract: one driving thread; abort() from any thread (the owner keeps the group
// alive until abort() returns).

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "common/errors.h"
#include "ops/shm/shm_board.h"
#include "ops/shm/shm_layout.h"
#include "ops/shm/shm_segment.h"

namespace runrun::shm {

struct GroupOptions {
  std::chrono::milliseconds collective_timeout{0};  // 0: no limit
  std::chrono::milliseconds connect_timeout{std::chrono::minutes(5)};
  size_t capacity = size_t{1} << 20;  // bytes per rank per step (a multiple of 4096)
  // Let collectives read peers' buffers directly (shm_cma.h) when every rank can: connect
  // probes it with two steps and every rank decides alike (single_copy()). Off by default: the
  // slot path measured faster (shm_collectives.h).
  bool single_copy = false;
};

class Group {
 public:
  using Clock = std::chrono::steady_clock;

  // Collective over the `size` ranks passing the same `key` of `board`: rank 0 creates the
  // segment and posts its name under `key`/name, the others map it, every rank posts under
  // `key`/mapped/<rank> whether it could, and rank 0 unlinks the name once all have answered.
  // Returns nullptr on every rank (with the reason in *why_not) when any rank could not create
  // or map it: the caller keeps its other transport. Throws what the board throws when a rank
  // does not answer within connect_timeout.
  static std::unique_ptr<Group> connect(Board& board, const std::string& key, int rank, int size,
                                        const GroupOptions& options, std::string* why_not);
  ~Group();
  Group(const Group&) = delete;
  Group& operator=(const Group&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  size_t capacity() const { return capacity_; }
  const std::string& segment_name() const { return segment_.name(); }
  // Whether every rank can read every peer's memory (options.single_copy and the probe passed
  // on every rank): the same answer on every rank.
  bool single_copy() const { return single_copy_; }

  // Starts operation `op`: throws ShutDownError after abort() or the error that broke the
  // group; sets the deadline of the steps that follow.
  void begin(const char* op);
  // This rank's slot for the next step (free to write: see the file comment).
  char* my_slot() const;
  // Publishes the next step and waits until every rank has published it (the errors above).
  void step();
  // `rank`'s slot of the step just completed; valid until this rank's next step().
  const char* slot(int rank) const;
  // Copies `bytes` at `remote` in `peer`'s address space into `local` (single_copy() only);
  // a refused or failed read breaks the group with PeerFailureError naming the peer.
  void read_peer(int peer, void* local, const void* remote, size_t bytes);

  void abort();

 private:
  Group(Segment segment, int rank, int size, const GroupOptions& options);
  [[noreturn]] void fail(ErrorCode code, const std::string& why);
  void leave();
  // Connect's two steps deciding single_copy_: each rank reads a word of every peer's memory.
  void probe_single_copy();
  bool peer_process_gone(int peer) const;
  // Whether `peer` left before completing step `target` (what it published past its last
  // completed step belongs to an operation it abandoned).
  bool peer_left_before(int peer, uint32_t target) const;
  // Whether some peer left before completing step `target`, or (with `processes`: a /proc read
  // per missing peer) died before publishing it: sets *lost to it and *died to whether its
  // process is gone.
  bool find_lost_peer(uint32_t target, int* lost, bool* died, bool processes) const;
  // The lowest peer that has not published step `target` (named by a timeout).
  int first_missing(uint32_t target) const;

  Segment segment_;
  int rank_;
  int size_;
  size_t capacity_;
  std::chrono::milliseconds timeout_;
  uint64_t pid_namespace_;
  std::atomic<uint32_t> steps_{0};  // steps completed (written by the driving thread only)
  const char* op_ = "";
  Clock::time_point deadline_;
  std::atomic<bool> aborted_{false};
  ErrorCode broken_code_ = ErrorCode::kOk;  // driving thread
  std::string broken_;
  bool single_copy_ = false;
  const uint64_t probe_word_ = kMagic;  // what peers read in probe_single_copy()
};

}  // namespace runrun::shm
