#include "ops/algorithms/broadcast.h"

#include <algorithm>
#include <vector>

#include "ops/algorithms/allgather.h"
#include "ops/algorithms/block_span.h"
#include "ops/base/block_layout.h"

namespace runrun::algorithms {
namespace {

// The binomial tree over ranks numbered from the root (relative rank v = rank - root mod N),
// walked from its widest edge down: in the step of `mask`, each v that is a multiple of
// 2 * mask (and has v + mask < N) passes [v + mask, min(v + 2 * mask, N)) to v + mask, which
// receives exactly once, in the step of its lowest set bit. `move(to_or_from, first, end,
// sending)` builds the transfer of the relative ranks [first, end).
template <typename Move>
void walk_tree(StepTransport& transport, int root, Move&& move) {
  const int n = transport.size();
  const int v = (transport.rank() - root + n) % n;
  const auto actual = [&](int relative) { return (relative + root) % n; };
  int top = 1;
  while (top < n) top *= 2;
  for (int mask = top / 2; mask >= 1; mask /= 2) {
    std::vector<StepTransfer> sends;
    std::vector<StepTransfer> receives;
    if (v % (2 * mask) == 0 && v + mask < n) {
      sends.push_back(move(actual(v + mask), v + mask, std::min(v + 2 * mask, n)));
    } else if (v % (2 * mask) == mask) {
      receives.push_back(move(actual(v - mask), v, std::min(v + mask, n)));
    }
    transport.step(sends, receives);
  }
}

}  // namespace

void broadcast_binomial_tree(StepTransport& transport, char* data, size_t bytes, int root) {
  if (transport.size() == 1 || bytes == 0) return;  // the same decision on every rank
  walk_tree(transport, root, [&](int peer, int, int) { return StepTransfer{peer, data, bytes}; });
}

void broadcast_scatter_allgather(StepTransport& transport, char* data, size_t bytes, int root) {
  const int n = transport.size();
  if (n == 1 || bytes == 0) return;
  // Block v (of N, as even as the bytes allow) belongs to relative rank v: the blocks of a
  // subtree are one run of the buffer.
  const auto sizes = even_split(bytes, static_cast<size_t>(n));
  auto starts = offsets_of(sizes);
  starts.push_back(bytes);
  walk_tree(transport, root, [&](int peer, int first, int end) {
    const size_t from = starts[static_cast<size_t>(first)];
    return StepTransfer{peer, data + from, starts[static_cast<size_t>(end)] - from};
  });
  std::vector<BlockSpan> spans(static_cast<size_t>(n));
  for (int rank = 0; rank < n; ++rank) {
    const auto v = static_cast<size_t>((rank - root + n) % n);
    spans[static_cast<size_t>(rank)] = {starts[v], sizes[v]};
  }
  allgather_ring(transport, data, spans);
}

}  // namespace runrun::algorithms
