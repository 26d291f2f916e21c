#pragma once
// Why: backends that build collectives out of blocks (gloo's exchanges, the shared-memory path)
// split a buffer into per-rank chunks and place variable-sized blocks one after another; the
// same arithmetic must give the same layout on every rank, so it is written once, here.
// Thread-safety: pure functions.

#include <cstddef>
#include <vector>

namespace runrun {

// Where each block starts when blocks of `sizes` lie one after another from 0.
inline std::vector<size_t> offsets_of(const std::vector<size_t>& sizes) {
  std::vector<size_t> offsets;
  offsets.reserve(sizes.size());
  size_t offset = 0;
  for (size_t size : sizes) {
    offsets.push_back(offset);
    offset += size;
  }
  return offsets;
}

// `count` elements split into `parts` chunks, the first count % parts one element longer.
inline std::vector<size_t> even_split(size_t count, size_t parts) {
  std::vector<size_t> sizes;
  sizes.reserve(parts);
  for (size_t p = 0; p < parts; ++p) sizes.push_back(count / parts + (p < count % parts ? 1 : 0));
  return sizes;
}

}  // namespace runrun
