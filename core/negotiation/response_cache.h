#pragma once
// Why: the steady-state fast path. Once a tensor was negotiated through the coordinator, every
// rank stores its response in the same slot (caches evolve identically because every rank
// applies the same responses in the same order). Later rounds only need one bit per slot,
// ANDed across ranks, instead of a coordinator round trip. A rank whose request no longer
// matches its cached one (new shape, dtype, ...) invalidates the slot on every rank.
// Thread-safety: owned by one background thread.

#include <cstddef>
#include <list>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/negotiation/hashed_name.h"
#include "core/negotiation/message.h"

namespace runrun {

class ResponseCache {
 public:
  explicit ResponseCache(size_t capacity) : capacity_(capacity) {}

  enum class Match { kMiss, kHit, kStale };
  struct Lookup {
    Match match;
    size_t slot;
  };
  // kHit when this rank's `request` negotiates like the one the slot's response was made for.
  Lookup lookup(const Request& request) const;
  // The same with the name's hash_name already computed (TensorEntry::name_hash).
  Lookup lookup(const Request& request, size_t name_hash) const;

  // Stores `response` (for this rank's `request`) in the lowest free slot, evicting the least
  // recently used entry when full. No-op when the capacity is 0.
  void put(const Response& response, const Request& request);
  const Response& response(size_t slot) const { return slots_[slot]->response; }
  void erase(size_t slot);
  // Marks a slot as used by this round (LRU order).
  void touch(size_t slot);

  // Number of slots ever used: the bit vector length every rank agrees on.
  size_t num_slots() const { return slots_.size(); }
  size_t size() const { return by_name_.size(); }
  bool enabled() const { return capacity_ > 0; }

 private:
  struct Entry {
    Response response;
    Request request;  // this rank's, as enqueued (compared by Request::negotiates_like)
    std::list<size_t>::iterator lru_position;
  };
  size_t capacity_;
  std::vector<std::optional<Entry>> slots_;
  std::unordered_map<std::string, size_t, NameHash, NameEqual> by_name_;
  std::list<size_t> lru_;  // front: most recently used
};

}  // namespace runrun
