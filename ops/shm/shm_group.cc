#include "ops/shm/shm_group.h"

#include <unistd.h>

#include <cstring>
#include <exception>
#include <utility>
#include <vector>

#include "ops/shm/shm_cma.h"
#include "ops/shm/shm_futex.h"
#include "ops/shm/shm_liveness.h"
#include "ops/shm/shm_wait.h"

namespace runrun::shm {
namespace {

// "No limit": far beyond any training step, still a finite deadline.
constexpr auto kNoLimit = std::chrono::hours(24 * 365);

std::string check_header(const Segment& segment, int size, size_t capacity) {
  const auto* header = reinterpret_cast<const Header*>(segment.data());
  if (header->magic.load(std::memory_order_acquire) != kMagic ||
      header->size != static_cast<uint64_t>(size) || header->capacity != capacity) {
    return "segment '" + segment.name() + "' does not hold a group of " + std::to_string(size) +
           " ranks with " + std::to_string(capacity) + "-byte slots";
  }
  return "";
}

}  // namespace

std::unique_ptr<Group> Group::connect(Board& board, const std::string& key, int rank, int size,
                                      const GroupOptions& options, std::string* why_not) {
  const size_t bytes = segment_bytes(static_cast<size_t>(size), options.capacity);
  Segment segment;
  std::string problem;
  if (rank == 0) {
    try {
      segment = Segment::create(bytes);
      auto* header = reinterpret_cast<Header*>(segment.data());
      header->size = static_cast<uint64_t>(size);
      header->capacity = options.capacity;
      header->magic.store(kMagic, std::memory_order_release);
    } catch (const std::exception& e) {
      problem = e.what();
    }
    board.set(key + "/name", problem.empty() ? segment.name() : "!" + problem);
  } else {
    const std::string name = board.get(key + "/name", options.connect_timeout);
    if (!name.empty() && name[0] == '!') {
      problem = "rank 0 could not create it: " + name.substr(1);
    } else {
      try {
        segment = Segment::open(name, bytes);
        problem = check_header(segment, size, options.capacity);
      } catch (const std::exception& e) {
        problem = e.what();
      }
    }
    board.set(key + "/mapped/" + std::to_string(rank), problem.empty() ? "ok" : problem);
  }
  // Every rank learns every answer, so all decide alike; rank 0 unlinks the name once every
  // member has answered (each has mapped it or never will).
  for (int r = 1; r < size; ++r) {
    const std::string answer =
        board.get(key + "/mapped/" + std::to_string(r), options.connect_timeout);
    if (answer != "ok" && problem.empty()) problem = "rank " + std::to_string(r) + ": " + answer;
  }
  segment.unlink();
  if (!problem.empty()) {
    if (why_not != nullptr) *why_not = problem;
    return nullptr;
  }
  std::unique_ptr<Group> group(new Group(std::move(segment), rank, size, options));
  if (options.single_copy && size > 1) group->probe_single_copy();
  return group;
}

void Group::probe_single_copy() {
  begin("connect");
  const uint64_t address = reinterpret_cast<uintptr_t>(&probe_word_);
  std::memcpy(my_slot(), &address, sizeof(address));
  step();
  uint64_t can = pid_namespace_ != 0 ? 1 : 0;
  for (int p = 0; p < size_ && can != 0; ++p) {
    if (p == rank_) continue;
    const RankBlock* block = block_of(segment_.data(), static_cast<size_t>(p));
    uint64_t theirs = 0;
    std::memcpy(&theirs, slot(p), sizeof(theirs));
    uint64_t value = 0;
    const bool readable =
        block->pid_namespace.load(std::memory_order_relaxed) == pid_namespace_ &&
        read_process_memory(block->pid.load(std::memory_order_acquire), &value,
                            reinterpret_cast<const void*>(theirs), sizeof(value)) == 0;
    if (!readable || value != kMagic) can = 0;
  }
  std::memcpy(my_slot(), &can, sizeof(can));
  step();
  bool all = true;
  for (int p = 0; p < size_; ++p) {
    uint64_t theirs = 0;
    std::memcpy(&theirs, slot(p), sizeof(theirs));
    all = all && theirs != 0;
  }
  single_copy_ = all;
}

void Group::read_peer(int peer, void* local, const void* remote, size_t bytes) {
  const RankBlock* block = block_of(segment_.data(), static_cast<size_t>(peer));
  const int error =
      read_process_memory(block->pid.load(std::memory_order_acquire), local, remote, bytes);
  if (error == 0) return;
  fail(ErrorCode::kPeerFailure,
       "could not read " + std::to_string(bytes) + " bytes of rank " + std::to_string(peer) +
           "'s buffer (process_vm_readv: " + std::strerror(error) +
           "): its process died or no longer permits it; check its output");
}

Group::Group(Segment segment, int rank, int size, const GroupOptions& options)
    : segment_(std::move(segment)),
      rank_(rank),
      size_(size),
      capacity_(options.capacity),
      timeout_(options.collective_timeout),
      pid_namespace_(pid_namespace_id()) {
  RankBlock* mine = block_of(segment_.data(), static_cast<size_t>(rank_));
  mine->pid_namespace.store(pid_namespace_, std::memory_order_relaxed);
  mine->pid.store(static_cast<int32_t>(getpid()), std::memory_order_release);
}

Group::~Group() { leave(); }

void Group::begin(const char* op) {
  op_ = op;
  if (aborted_.load(std::memory_order_acquire)) {
    throw ShutDownError(RUNRUN_WHERE, std::string(op) + " on rank " + std::to_string(rank_) +
                                          ": the shared-memory group was aborted (the runtime "
                                          "is shutting down or lost a peer)");
  }
  if (broken_code_ != ErrorCode::kOk) {
    throw_error(broken_code_, RUNRUN_WHERE,
                std::string(op) + " on rank " + std::to_string(rank_) +
                    ": the shared-memory group is unusable after an earlier failure: " + broken_);
  }
  deadline_ =
      Clock::now() +
      (timeout_.count() > 0 ? timeout_ : std::chrono::duration_cast<Clock::duration>(kNoLimit));
}

char* Group::my_slot() const {
  return slot_of(segment_.data(), static_cast<size_t>(size_), capacity_, static_cast<size_t>(rank_),
                 (steps_.load(std::memory_order_relaxed) + 1) % 2);
}

const char* Group::slot(int rank) const {
  return slot_of(segment_.data(), static_cast<size_t>(size_), capacity_, static_cast<size_t>(rank),
                 steps_.load(std::memory_order_relaxed) % 2);
}

bool Group::peer_process_gone(int peer) const {
  const RankBlock* block = block_of(segment_.data(), static_cast<size_t>(peer));
  const int32_t pid = block->pid.load(std::memory_order_acquire);
  if (pid <= 0 || pid == getpid() || pid_namespace_ == 0) return false;
  if (block->pid_namespace.load(std::memory_order_relaxed) != pid_namespace_) return false;
  return process_is_gone(pid);
}

bool Group::peer_left_before(int peer, uint32_t target) const {
  const RankBlock* block = block_of(segment_.data(), static_cast<size_t>(peer));
  if (block->gone.load(std::memory_order_acquire) == 0) return false;
  return !reached(block->completed.load(std::memory_order_acquire), target);
}

void Group::step() {
  const uint32_t target = steps_.load(std::memory_order_relaxed) + 1;
  const uint32_t all = target * static_cast<uint32_t>(size_);  // wraps as the counter does
  char* base = segment_.data();
  Header* header = header_of(base);
  block_of(base, static_cast<size_t>(rank_))->published.store(target, std::memory_order_seq_cst);
  arrive(header->arrived, header->sleepers, all);
  WaitLimits limits;
  limits.aborted = &aborted_;
  limits.deadline = deadline_;
  int lost = -1;
  bool died = false;
  limits.peer_gone = [&] { return find_lost_peer(target, &lost, &died, false); };
  limits.peer_died = [&] { return find_lost_peer(target, &lost, &died, true); };
  auto outcome = wait_for(header->arrived, header->sleepers, all, limits);
  // A peer that left may have published this step for an operation it then abandoned (every
  // peer published it: no process to check).
  if (outcome == WaitOutcome::kReached && find_lost_peer(target, &lost, &died, false)) {
    outcome = WaitOutcome::kPeerGone;
  }
  switch (outcome) {
    case WaitOutcome::kReached:
      break;
    case WaitOutcome::kAborted:
      begin(op_);  // throws ShutDownError
      break;
    case WaitOutcome::kTimedOut:
      fail(ErrorCode::kTimeout,
           "timed out after " + std::to_string(timeout_.count()) +
               " ms (RUNRUN_COLLECTIVE_TIMEOUT) waiting for rank " +
               std::to_string(first_missing(target)) +
               " over shared memory: it did not take part or is stuck; check its output");
    case WaitOutcome::kPeerGone: {
      const int p = lost;
      const RankBlock* peer = block_of(base, static_cast<size_t>(p));
      // A peer that left because it lost another rank passes that rank on.
      const int32_t root = died ? p + 1 : peer->lost.load(std::memory_order_acquire);
      std::string how = died ? ": its process (pid " + std::to_string(peer->pid.load()) + ") died"
                             : std::string(": it left the shared-memory group");
      if (!died && root > 0) how += " after it lost rank " + std::to_string(root - 1);
      block_of(base, static_cast<size_t>(rank_))
          ->lost.store(root > 0 ? root : p + 1, std::memory_order_release);
      fail(ErrorCode::kPeerFailure,
           "lost rank " + std::to_string(p) + how +
               "; the peer died, was aborted, or gave up after its own collective timeout: "
               "check its output");
    }
  }
  steps_.store(target, std::memory_order_relaxed);
}

bool Group::find_lost_peer(uint32_t target, int* lost, bool* died, bool processes) const {
  // A peer that left on its own comes before one that left because it lost another (that one
  // would name the same root cause, second-hand).
  *lost = -1;
  for (int p = 0; p < size_; ++p) {
    if (p == rank_ || !peer_left_before(p, target)) continue;
    const bool messenger =
        block_of(segment_.data(), static_cast<size_t>(p))->lost.load(std::memory_order_acquire) > 0;
    if (*lost < 0 || !messenger) *lost = p;
    if (!messenger) break;
  }
  if (*lost >= 0) {
    *died = false;
    return true;
  }
  if (!processes) return false;
  // Only a peer still missing can have died in the middle of this step.
  for (int p = 0; p < size_; ++p) {
    if (p == rank_) continue;
    const RankBlock* block = block_of(segment_.data(), static_cast<size_t>(p));
    if (!reached(block->published.load(std::memory_order_acquire), target) &&
        peer_process_gone(p)) {
      *lost = p;
      *died = true;
      return true;
    }
  }
  return false;
}

int Group::first_missing(uint32_t target) const {
  for (int p = 0; p < size_; ++p) {
    if (p == rank_) continue;
    const uint32_t published = block_of(segment_.data(), static_cast<size_t>(p))
                                   ->published.load(std::memory_order_acquire);
    if (!reached(published, target)) return p;
  }
  return rank_ == 0 ? 1 : 0;  // every peer published meanwhile: name one rather than none
}

void Group::fail(ErrorCode code, const std::string& why) {
  broken_code_ = code;
  broken_ = why;
  leave();  // peers learn at once, as from a closed connection
  throw_error(code, RUNRUN_WHERE,
              std::string(op_) + " on rank " + std::to_string(rank_) + ": " + why);
}

void Group::leave() {
  if (segment_.data() == nullptr) return;
  RankBlock* mine = block_of(segment_.data(), static_cast<size_t>(rank_));
  mine->completed.store(steps_.load(std::memory_order_relaxed), std::memory_order_relaxed);
  mine->gone.store(1, std::memory_order_seq_cst);
  futex_wake_all(header_of(segment_.data())->arrived);  // peers sleep on the arrival counter
}

void Group::abort() {
  aborted_.store(true, std::memory_order_seq_cst);
  leave();  // also wakes this process's own sleeping step, which then sees aborted_
}

}  // namespace runrun::shm
