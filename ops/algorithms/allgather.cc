#include "ops/algorithms/allgather.h"

#include <algorithm>
#include <cstring>

namespace runrun::algorithms {

void allgather_bruck(StepTransport& transport, char* buffer, const std::vector<BlockSpan>& spans,
                     char* scratch) {
  const int n = transport.size();
  const int me = transport.rank();
  if (n == 1) return;
  // The scratch holds the blocks rotated so that this rank's own comes first: place i holds
  // the block of rank (me + i) mod n, so what a rank has and what it passes on are always
  // one run at the start of its scratch.
  const auto block_of = [&](int place) { return spans[static_cast<size_t>((me + place) % n)]; };
  std::vector<size_t> starts(static_cast<size_t>(n) + 1, 0);
  for (int place = 0; place < n; ++place) {
    starts[static_cast<size_t>(place) + 1] =
        starts[static_cast<size_t>(place)] + block_of(place).bytes;
  }
  const BlockSpan own = block_of(0);
  if (own.bytes > 0) std::memcpy(scratch, buffer + own.offset, own.bytes);
  // Step with distance d: this rank holds places [0, d); it sends the first min(d, n - d) of
  // them to rank me - d (where they are places [d, ...)) and receives as many from me + d.
  for (int d = 1; d < n; d *= 2) {
    const auto count = static_cast<size_t>(std::min(d, n - d));
    const auto at = static_cast<size_t>(d);
    transport.step({{(me - d + n) % n, scratch, starts[count]}},
                   {{(me + d) % n, scratch + starts[at], starts[at + count] - starts[at]}});
  }
  for (int place = 1; place < n; ++place) {
    const BlockSpan block = block_of(place);
    if (block.bytes > 0) {
      std::memcpy(buffer + block.offset, scratch + starts[static_cast<size_t>(place)], block.bytes);
    }
  }
}

void allgather_ring(StepTransport& transport, char* buffer, const std::vector<BlockSpan>& spans) {
  const int n = transport.size();
  const int me = transport.rank();
  const int next = (me + 1) % n;
  const int previous = (me - 1 + n) % n;
  for (int s = 0; s + 1 < n; ++s) {
    const BlockSpan out = spans[static_cast<size_t>((me - s + n) % n)];
    const BlockSpan in = spans[static_cast<size_t>((me - s - 1 + 2 * n) % n)];
    transport.step({{next, buffer + out.offset, out.bytes}},
                   {{previous, buffer + in.offset, in.bytes}});
  }
}

}  // namespace runrun::algorithms
