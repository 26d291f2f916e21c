#pragma once
// Why: the data the rendezvous server keeps, apart from sockets so that it can be reasoned
// about (and tested) alone. Keys live per generation: elastic training starts a new generation
// on every membership change, and dropping the old generations frees their keys at once. The
// total size of keys and values is bounded, so clients cannot exhaust the launcher's memory.
// Counters (add) are values holding a decimal integer, as in torch's TCPStore, so `get` reads
// them too.
// Thread-safety: none; owned by the server thread.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace runrun::rendezvous {

class KeyValueStore {
 public:
  explicit KeyValueStore(size_t max_bytes) : max_bytes_(max_bytes) {}

  // False (and nothing changed) when the value would push the store past its bound.
  bool set(uint64_t generation, const std::string& key, const std::string& value);
  std::optional<std::string> get(uint64_t generation, const std::string& key) const;
  // The keys of `keys` that do not exist in `generation`, in order.
  std::vector<std::string> missing(uint64_t generation, const std::vector<std::string>& keys) const;

  struct AddResult {
    std::optional<int64_t> value;  // the new value; empty on error
    std::string error;
    bool full = false;  // the error is the store's memory bound
  };
  // Adds `delta` to the counter (0 when absent).
  AddResult add(uint64_t generation, const std::string& key, int64_t delta);
  // True when the key existed.
  bool remove(uint64_t generation, const std::string& key);
  // Drops every generation below `generation`.
  void drop_before(uint64_t generation);

  size_t bytes() const { return bytes_; }

 private:
  using Generation = std::unordered_map<std::string, std::string>;
  std::map<uint64_t, Generation> generations_;
  size_t bytes_ = 0;
  size_t max_bytes_;
};

}  // namespace runrun::rendezvous
