#include "core/negotiation/response_cache.h"

namespace runrun {

ResponseCache::Lookup ResponseCache::lookup(const Request& request) const {
  return lookup(request, hash_name(request.name));
}

ResponseCache::Lookup ResponseCache::lookup(const Request& request, size_t name_hash) const {
  auto it = by_name_.find(HashedName{request.name, name_hash});
  if (it == by_name_.end()) return {Match::kMiss, 0};
  const Entry& entry = *slots_[it->second];
  return {entry.request.negotiates_like(request) ? Match::kHit : Match::kStale, it->second};
}

void ResponseCache::put(const Response& response, const Request& request) {
  if (capacity_ == 0) return;
  if (auto it = by_name_.find(response.name); it != by_name_.end()) erase(it->second);
  if (by_name_.size() >= capacity_) erase(lru_.back());
  size_t slot = 0;
  while (slot < slots_.size() && slots_[slot]) ++slot;
  if (slot == slots_.size()) slots_.emplace_back();
  lru_.push_front(slot);
  slots_[slot] = Entry{response, request, lru_.begin()};
  by_name_[response.name] = slot;
}

void ResponseCache::erase(size_t slot) {
  if (slot >= slots_.size() || !slots_[slot]) return;
  by_name_.erase(slots_[slot]->response.name);
  lru_.erase(slots_[slot]->lru_position);
  slots_[slot].reset();
}

void ResponseCache::touch(size_t slot) {
  if (slot >= slots_.size() || !slots_[slot]) return;
  lru_.splice(lru_.begin(), lru_, slots_[slot]->lru_position);
}

}  // namespace runrun
