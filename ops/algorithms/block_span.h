#pragma once
// Why: the gathering algorithms (Bruck, ring, the broadcast's scatter) move each rank's block
// of a buffer, and the blocks need not follow rank order (a broadcast numbers them from its
// root) nor be equal (allgatherv): a span per rank says where that rank's block lies.
// Thread-safety: values and pure functions.

#include <cstddef>
#include <vector>

namespace runrun::algorithms {

struct BlockSpan {
  size_t offset;  // bytes from the start of the buffer
  size_t bytes;
};

// Blocks of `bytes[p]` for rank p, one after another in rank order from 0.
inline std::vector<BlockSpan> spans_in_rank_order(const std::vector<size_t>& bytes) {
  std::vector<BlockSpan> spans;
  spans.reserve(bytes.size());
  size_t offset = 0;
  for (size_t size : bytes) {
    spans.push_back({offset, size});
    offset += size;
  }
  return spans;
}

}  // namespace runrun::algorithms
