#include "ops/adasum/adasum_allreduce.h"

#include <algorithm>
#include <bit>
#include <numeric>
#include <string>

#include "common/errors.h"
#include "ops/cpu/adasum_kernels.h"

namespace runrun {
namespace {

// A range of elements of the fused buffer.
struct Piece {
  size_t offset = 0;
  size_t count = 0;
  size_t end() const { return offset + count; }
};

// The two halves of `piece` at one level: the lower rank of the pair keeps the first (the
// shorter one for an odd count), the upper rank the second.
Piece half_of(const Piece& piece, bool upper) {
  const size_t first = piece.count / 2;
  return upper ? Piece{piece.offset + first, piece.count - first} : Piece{piece.offset, first};
}

// What `rank` holds after `levels` levels of halving.
Piece piece_after(size_t total, int rank, int levels) {
  Piece piece{0, total};
  for (int k = 0; k < levels; ++k) piece = half_of(piece, ((rank >> k) & 1) != 0);
  return piece;
}

// Back up the tree: at each level, from the last, partners swap the pieces they hold, in
// place (the partner's piece lies next to this rank's), until every rank holds the whole.
void spread_back(Backend& backend, std::byte* data, size_t total, size_t element, int levels,
                 std::vector<size_t>& send_bytes, std::vector<size_t>& recv_bytes) {
  const int rank = backend.rank();
  for (int k = levels - 1; k >= 0; --k) {
    const auto partner = static_cast<size_t>(rank ^ (1 << k));
    const Piece mine = piece_after(total, rank, k + 1);
    const Piece other = piece_after(total, static_cast<int>(partner), k + 1);
    send_bytes[partner] = mine.count * element;
    recv_bytes[partner] = other.count * element;
    backend.alltoallv(data + mine.offset * element, send_bytes, data + other.offset * element,
                      recv_bytes);
    send_bytes[partner] = 0;
    recv_bytes[partner] = 0;
  }
}

// The checks of adasum_allreduce's arguments.
void check_adasum(int size, DataType type) {
  if (!adasum_supports_size(size)) {
    throw UnsupportedError(RUNRUN_WHERE,
                           "Adasum needs a power-of-two number of ranks (as "
                           "Horovod's), this process set has " +
                               std::to_string(size));
  }
  if (!is_floating_point(type)) {
    throw UnsupportedError(RUNRUN_WHERE, "Adasum combines floating-point tensors only, not " +
                                             std::string(data_type_name(type)));
  }
}

}  // namespace

bool adasum_supports_size(int size) {
  return size > 0 && std::has_single_bit(static_cast<unsigned>(size));
}

void adasum_allreduce(Backend& backend, void* buffer, DataType type,
                      std::span<const size_t> tensor_counts, AdasumScratch& scratch) {
  const int size = backend.size();
  const int rank = backend.rank();
  check_adasum(size, type);
  const size_t total = std::accumulate(tensor_counts.begin(), tensor_counts.end(), size_t{0});
  if (size == 1 || total == 0) return;
  const size_t element = element_size(type);
  const size_t tensors = tensor_counts.size();
  std::vector<size_t> starts(tensors, 0);
  std::exclusive_scan(tensor_counts.begin(), tensor_counts.end(), starts.begin(), size_t{0});

  auto* data = static_cast<std::byte*>(buffer);
  // Grown, never shrunk nor refilled: no page faults and no zeroing on every call.
  scratch.received.resize(std::max(scratch.received.size(), (total - total / 2) * element));
  std::byte* theirs = scratch.received.data();  // the largest half received
  std::vector<size_t>& send_bytes = scratch.send_bytes;
  std::vector<size_t>& recv_bytes = scratch.recv_bytes;
  send_bytes.assign(static_cast<size_t>(size), 0);
  recv_bytes.assign(static_cast<size_t>(size), 0);
  std::vector<cpu::DotAndNorms>& partial = scratch.partial;
  std::vector<cpu::DotAndNorms>& everyone = scratch.everyone;
  partial.resize(tensors);
  everyone.resize(tensors * static_cast<size_t>(size));
  const std::vector<size_t> partial_bytes(static_cast<size_t>(size),
                                          tensors * sizeof(cpu::DotAndNorms));
  const int levels = std::countr_zero(static_cast<unsigned>(size));

  for (int k = 0; k < levels; ++k) {
    const Piece held = piece_after(total, rank, k);
    const bool upper = ((rank >> k) & 1) != 0;
    const Piece keep = half_of(held, upper);
    const Piece give = half_of(held, !upper);
    const auto partner = static_cast<size_t>(rank ^ (1 << k));
    send_bytes[partner] = give.count * element;
    recv_bytes[partner] = keep.count * element;
    backend.alltoallv(data + give.offset * element, send_bytes, theirs, recv_bytes);
    send_bytes[partner] = 0;
    recv_bytes[partner] = 0;

    // Per tensor, over this rank's part of it: "a" is always the lower side's partial result,
    // so every rank of the block adds up the same quantities.
    for (size_t t = 0; t < tensors; ++t) {
      const size_t lo = std::max(keep.offset, starts[t]);
      const size_t hi = std::min(keep.end(), starts[t] + tensor_counts[t]);
      partial[t] = {};
      if (lo >= hi) continue;
      const std::byte* mine = data + lo * element;
      const std::byte* other = theirs + (lo - keep.offset) * element;
      partial[t] = upper ? cpu::dot_and_norms(other, mine, hi - lo, type)
                         : cpu::dot_and_norms(mine, other, hi - lo, type);
    }
    backend.allgatherv(partial.data(), tensors * sizeof(cpu::DotAndNorms), everyone.data(),
                       partial_bytes);
    const int block = 2 << k;  // the ranks holding pieces of this level's two partial results
    const int first_rank = rank & ~(block - 1);
    for (size_t t = 0; t < tensors; ++t) {
      const size_t lo = std::max(keep.offset, starts[t]);
      const size_t hi = std::min(keep.end(), starts[t] + tensor_counts[t]);
      if (lo >= hi) continue;
      cpu::DotAndNorms whole;
      for (int q = first_rank; q < first_rank + block; ++q) {  // rank order: same sum everywhere
        const cpu::DotAndNorms& p = everyone[static_cast<size_t>(q) * tensors + t];
        whole.dot += p.dot;
        whole.a_norm_sq += p.a_norm_sq;
        whole.b_norm_sq += p.b_norm_sq;
      }
      const cpu::AdasumCoefficients c = cpu::adasum_coefficients(whole);
      std::byte* mine = data + lo * element;
      const std::byte* other = theirs + (lo - keep.offset) * element;
      if (upper) {
        cpu::scaled_add(mine, other, c.a, mine, c.b, hi - lo, type);
      } else {
        cpu::scaled_add(mine, mine, c.a, other, c.b, hi - lo, type);
      }
    }
  }
  spread_back(backend, data, total, element, levels, send_bytes, recv_bytes);
}

}  // namespace runrun
