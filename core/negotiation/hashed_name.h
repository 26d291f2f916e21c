#pragma once
// Why: an op's name is looked up in three hash tables on its way through a process set (the
// queue's in-flight set, the controller's pending map, the response cache). The queue hashes it
// once when it takes the op (TensorEntry::name_hash); the tables are keyed or searched by
// HashedName and reuse that hash instead of hashing the name again, ~80 instructions apiece per
// op (issue 12, point 6). NameHash and NameEqual also take a plain name (then it is hashed).
// Thread-safety: plain values.

#include <cstddef>
#include <functional>
#include <string_view>

namespace runrun {

struct HashedName {
  std::string_view name;
  size_t hash;  // hash_name(name)
};

inline size_t hash_name(std::string_view name) { return std::hash<std::string_view>{}(name); }

// Not noexcept on purpose: the tables then keep each node's hash, as they do with std::hash,
// so a lookup compares names only where the hashes are equal.
struct NameHash {
  using is_transparent = void;
  size_t operator()(const HashedName& name) const { return name.hash; }
  size_t operator()(std::string_view name) const { return hash_name(name); }
};

struct NameEqual {
  using is_transparent = void;
  static std::string_view view(const HashedName& name) { return name.name; }
  static std::string_view view(std::string_view name) { return name; }
  template <typename A, typename B>
  bool operator()(const A& a, const B& b) const {
    return view(a) == view(b);
  }
};

}  // namespace runrun
