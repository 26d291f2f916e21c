#pragma once
// Why: every member of a shared-memory group maps the same bytes; this is what they mean. A
// header (written by the creator before it publishes the name, plus the group's arrival
// counter on a cache line of its own), one control block per rank (its own cache lines: each is
// written by its rank only) and, per rank, two slots of `capacity` bytes that the rank writes in
// alternate steps (shm_group.h explains why two).
// Thread-safety: everything a peer may write concurrently is a lock-free atomic, valid across
// processes.

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace runrun::shm {

inline constexpr uint64_t kMagic = 0x72756e72756e5348ULL;  // "runrunSH"

struct Header {
  std::atomic<uint64_t> magic;  // kMagic once the creator initialised the segment
  uint64_t size;                // ranks
  uint64_t capacity;            // bytes per slot
  // Every rank adds 1 per step it publishes (wraps around): every rank has published step k
  // once it reached size * k. Waiters sleep on this one word, and only the arrival that
  // completes a step wakes them (shm_group.h).
  alignas(128) std::atomic<uint32_t> arrived;
  std::atomic<uint32_t> sleepers;  // threads sleeping on `arrived`
};

struct alignas(128) RankBlock {
  std::atomic<uint32_t> published;      // steps this rank has published (wraps around)
  std::atomic<uint32_t> gone;           // nonzero: this rank left (aborted, failed or destroyed)
  std::atomic<uint32_t> completed;      // once gone: the steps it completed (published ones past
                                        // that belong to an operation it abandoned)
  std::atomic<int32_t> pid;             // its process id (0 until it attached)
  std::atomic<int32_t> lost;            // once gone after losing a peer: that peer's rank + 1, so
                                        // the others name the root cause, not the messenger
  std::atomic<uint64_t> pid_namespace;  // shm_liveness.h; pid is meaningful where equal
};

inline constexpr size_t kHeaderBytes = 4096;
static_assert(sizeof(Header) <= kHeaderBytes, "the header must fit before the rank blocks");

inline Header* header_of(char* base) { return reinterpret_cast<Header*>(base); }
inline constexpr size_t kSlotAlignment = 4096;

inline size_t blocks_bytes(size_t size) {
  const size_t bytes = size * sizeof(RankBlock);
  return (bytes + kSlotAlignment - 1) / kSlotAlignment * kSlotAlignment;
}

inline size_t segment_bytes(size_t size, size_t capacity) {
  return kHeaderBytes + blocks_bytes(size) + size * 2 * capacity;
}

inline RankBlock* block_of(char* base, size_t rank) {
  return reinterpret_cast<RankBlock*>(base + kHeaderBytes) + rank;
}

// Slot `half` (0 or 1) of `rank`.
inline char* slot_of(char* base, size_t size, size_t capacity, size_t rank, size_t half) {
  return base + kHeaderBytes + blocks_bytes(size) + (rank * 2 + half) * capacity;
}

}  // namespace runrun::shm
