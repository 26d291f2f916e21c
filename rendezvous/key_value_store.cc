#include "rendezvous/key_value_store.h"

#include <charconv>
#include <limits>

namespace runrun::rendezvous {

bool KeyValueStore::set(uint64_t generation, const std::string& key, const std::string& value) {
  Generation& keys = generations_[generation];
  auto it = keys.find(key);
  const size_t old_size = it == keys.end() ? 0 : key.size() + it->second.size();
  const size_t new_size = key.size() + value.size();
  if (bytes_ - old_size + new_size > max_bytes_) {
    if (keys.empty()) generations_.erase(generation);
    return false;
  }
  bytes_ = bytes_ - old_size + new_size;
  keys[key] = value;
  return true;
}

std::optional<std::string> KeyValueStore::get(uint64_t generation, const std::string& key) const {
  auto gen = generations_.find(generation);
  if (gen == generations_.end()) return std::nullopt;
  auto it = gen->second.find(key);
  if (it == gen->second.end()) return std::nullopt;
  return it->second;
}

std::vector<std::string> KeyValueStore::missing(uint64_t generation,
                                                const std::vector<std::string>& keys) const {
  std::vector<std::string> out;
  auto gen = generations_.find(generation);
  for (const std::string& key : keys) {
    if (gen == generations_.end() || gen->second.count(key) == 0) out.push_back(key);
  }
  return out;
}

KeyValueStore::AddResult KeyValueStore::add(uint64_t generation, const std::string& key,
                                            int64_t delta) {
  int64_t current = 0;
  if (auto value = get(generation, key)) {
    const char* end = value->data() + value->size();
    auto [ptr, ec] = std::from_chars(value->data(), end, current);
    if (ec != std::errc() || ptr != end) {
      return {std::nullopt, "key '" + key + "' holds a value that is not a counter"};
    }
  }
  const bool overflow = (delta > 0 && current > std::numeric_limits<int64_t>::max() - delta) ||
                        (delta < 0 && current < std::numeric_limits<int64_t>::min() - delta);
  if (overflow) return {std::nullopt, "counter '" + key + "' would overflow int64"};
  const int64_t next = current + delta;
  if (!set(generation, key, std::to_string(next))) {
    return {std::nullopt, "the rendezvous store is full", true};
  }
  return {next, {}};
}

bool KeyValueStore::remove(uint64_t generation, const std::string& key) {
  auto gen = generations_.find(generation);
  if (gen == generations_.end()) return false;
  auto it = gen->second.find(key);
  if (it == gen->second.end()) return false;
  bytes_ -= key.size() + it->second.size();
  gen->second.erase(it);
  if (gen->second.empty()) generations_.erase(gen);
  return true;
}

void KeyValueStore::drop_before(uint64_t generation) {
  auto end = generations_.lower_bound(generation);
  for (auto it = generations_.begin(); it != end; ++it) {
    for (const auto& [key, value] : it->second) bytes_ -= key.size() + value.size();
  }
  generations_.erase(generations_.begin(), end);
}

}  // namespace runrun::rendezvous
