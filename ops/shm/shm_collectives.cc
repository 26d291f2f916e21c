#include "ops/shm/shm_collectives.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "ops/base/block_layout.h"
#include "ops/cpu/copy_bytes.h"
#include "ops/cpu/reduce_kernels.h"

namespace runrun::shm {
namespace {

// Bytes of a slice reduced before the same bytes are copied to their second place: small
// enough to stay in a core's L1/L2 between the two.
constexpr size_t kReduceBlockBytes = size_t{32} << 10;

size_t pieces(size_t bytes, size_t per_piece) { return (bytes + per_piece - 1) / per_piece; }

// The part of a `total`-long block that piece `s` of `per_piece` covers (0 past the end).
size_t piece_length(size_t total, size_t s, size_t per_piece) {
  const size_t at = s * per_piece;
  return at >= total ? 0 : std::min(per_piece, total - at);
}

bool overlaps(const void* a, size_t a_bytes, const void* b, size_t b_bytes) {
  const auto* x = static_cast<const char*>(a);
  const auto* y = static_cast<const char*>(b);
  return a_bytes > 0 && b_bytes > 0 && x < y + b_bytes && y < x + a_bytes;
}

// Each rank's part of a slot when a step carries one block per destination rank.
size_t per_destination(const Group& group) {
  return group.capacity() / static_cast<size_t>(group.size()) / 64 * 64;
}

// Bytes of a peer the single-copy reduction reads per call: small enough that a chunk from a
// peer, the accumulator and the target stay in a core's cache, large enough that the
// syscall's fixed cost stays small (at most half a slot: two chunks of scratch).
size_t chunk_bytes(const Group& group) {
  return std::min(size_t{64} << 10, (group.capacity() - 256) / 2 / 64 * 64);
}

// allreduce of more than a slot when the group can read peers' memory (shm_cma.h): three steps
// in all, each byte of a peer moved by one process_vm_readv.
void allreduce_single_copy(Group& group, char* buffer, size_t count, DataType type, ReduceOp op) {
  const size_t esize = element_size(type);
  const auto n = static_cast<size_t>(group.size());
  const auto me = static_cast<size_t>(group.rank());
  // Step 1: where every buffer is, and every rank's data ready in it.
  const uint64_t address = reinterpret_cast<uintptr_t>(buffer);
  std::memcpy(group.my_slot(), &address, sizeof(address));
  group.step();
  std::vector<const char*> remote(n);
  for (size_t p = 0; p < n; ++p) {
    uint64_t theirs = 0;
    std::memcpy(&theirs, group.slot(static_cast<int>(p)), sizeof(theirs));
    remote[p] = reinterpret_cast<const char*>(theirs);
  }
  const auto slices = even_split(count, n);
  const auto offsets = offsets_of(slices);
  // Slice `me`, in chunks small enough that a chunk read from each peer stays in cache while it
  // is reduced: this rank's next slot is free scratch (shm_group.h) for two of them. Reduced in
  // rank order (rank 0's data first), as the slot path does, the last reduction written
  // straight into this buffer (no accumulator copied back); only slice `me` of this buffer is
  // written, and the peers read only their own slices of it meanwhile.
  const size_t chunk = std::max<size_t>(1, chunk_bytes(group) / esize);
  // Each scratch chunk is placed congruent (mod 64) to what is read into it (copy_bytes.h).
  const size_t scratch = (chunk * esize + 64 + 63) / 64 * 64;
  char* incoming_base = group.my_slot();
  char* accumulator_base = incoming_base + scratch;
  char* own = buffer + offsets[me] * esize;
  for (size_t at = 0; at < slices[me]; at += chunk) {
    const size_t k = std::min(chunk, slices[me] - at);
    char* target = own + at * esize;
    const auto read = [&](size_t p, char* base) {
      const char* from = remote[p] + (offsets[me] + at) * esize;
      char* into = base + cpu::congruent_offset(base, from);
      group.read_peer(static_cast<int>(p), into, from, k * esize);
      return into;
    };
    if (me == 0) {
      for (size_t p = 1; p < n; ++p) cpu::reduce_into(target, read(p, incoming_base), k, type, op);
    } else {
      char* accumulator = read(0, accumulator_base);
      for (size_t p = 1; p < n; ++p) {
        const char* source = p == me ? target : read(p, incoming_base);
        if (p + 1 < n) {
          cpu::reduce_into(accumulator, source, k, type, op);
        } else {
          cpu::reduce_to(target, accumulator, source, k, type, op);  // source may be target
        }
      }
    }
  }
  group.step();  // step 2: every slice reduced in its rank's buffer
  for (size_t p = 0; p < n; ++p) {
    if (p == me || slices[p] == 0) continue;
    group.read_peer(static_cast<int>(p), buffer + offsets[p] * esize,
                    remote[p] + offsets[p] * esize, slices[p] * esize);
  }
  group.step();  // step 3: no peer reads this buffer any more
}

}  // namespace

void allreduce(Group& group, void* data, size_t count, DataType type, ReduceOp op) {
  group.begin("allreduce");
  const size_t esize = element_size(type);
  const size_t bytes = count * esize;
  if (bytes == 0 || group.size() == 1) return;
  char* buffer = static_cast<char*>(data);
  const auto n = static_cast<size_t>(group.size());
  if (bytes <= std::min(kOneStepBytes, group.capacity())) {
    cpu::copy_bytes(group.my_slot(), buffer, bytes);
    group.step();
    cpu::reduce_to(buffer, group.slot(0), group.slot(1), count, type, op);
    for (int p = 2; p < group.size(); ++p) cpu::reduce_into(buffer, group.slot(p), count, type, op);
    return;
  }
  // Three steps in all, each byte of a peer read once, against two steps per slot-sized piece
  // that copy each byte into a slot and out again: only where the group opted in (the slots
  // measured cheaper, see kSingleCopyMinRanks).
  if (group.single_copy() && group.size() >= kSingleCopyMinRanks) {
    return allreduce_single_copy(group, buffer, count, type, op);
  }
  const auto me = static_cast<size_t>(group.rank());
  const size_t per_piece = group.capacity() / esize;
  for (size_t at = 0; at < count; at += per_piece) {
    const size_t elements = std::min(per_piece, count - at);
    char* piece = buffer + at * esize;
    const auto slices = even_split(elements, n);
    const auto offsets = offsets_of(slices);
    // Reduce-scatter step: the slices the other ranks reduce go into this rank's slot, at their
    // place in the piece (its own slice it reads from the buffer: (n-1)/n of the piece copied).
    char* outgoing = group.my_slot();
    for (size_t p = 0; p < n; ++p) {
      if (p != me) {
        cpu::copy_bytes(outgoing + offsets[p] * esize, piece + offsets[p] * esize,
                        slices[p] * esize);
      }
    }
    group.step();
    const size_t from = offsets[me] * esize;
    const size_t mine = slices[me];
    char* own = piece + from;
    const auto source = [&](size_t p) -> const char* {
      return p == me ? own : group.slot(static_cast<int>(p)) + from;
    };
    // Slice `me` reduced in rank order (rank 0's data first), published in this rank's next
    // slot and kept in the buffer. Block by block: the second copy of a block reads it from
    // this core's cache, not memory (one pass over the slice fewer).
    char* reduced = group.my_slot();
    const size_t block = std::max<size_t>(1, kReduceBlockBytes / esize);
    for (size_t at_block = 0; at_block < mine; at_block += block) {
      const size_t k = std::min(block, mine - at_block);
      const size_t offset = at_block * esize;
      const auto input = [&](size_t p) { return source(p) + offset; };
      if (me == 0) {
        for (size_t p = 1; p < n; ++p) cpu::reduce_into(own + offset, input(p), k, type, op);
        cpu::copy_bytes(reduced + offset, own + offset, k * esize);
      } else {
        cpu::reduce_to(reduced + offset, input(0), input(1), k, type, op);
        for (size_t p = 2; p < n; ++p) cpu::reduce_into(reduced + offset, input(p), k, type, op);
        cpu::copy_bytes(own + offset, reduced + offset, k * esize);
      }
    }
    group.step();
    // Allgather step: the other ranks' reduced slices.
    for (size_t p = 0; p < n; ++p) {
      if (p != me) {
        cpu::copy_bytes(piece + offsets[p] * esize, group.slot(static_cast<int>(p)),
                        slices[p] * esize);
      }
    }
  }
}

void broadcast(Group& group, void* buffer, size_t bytes, int root) {
  group.begin("broadcast");
  if (bytes == 0 || group.size() == 1) return;
  char* data = static_cast<char*>(buffer);
  const bool is_root = group.rank() == root;
  for (size_t at = 0; at < bytes; at += group.capacity()) {
    const size_t length = std::min(group.capacity(), bytes - at);
    if (is_root) cpu::copy_bytes(group.my_slot(), data + at, length);
    group.step();
    if (!is_root) cpu::copy_bytes(data + at, group.slot(root), length);
  }
}

void allgatherv(Group& group, const void* in, size_t send_bytes, void* out,
                const std::vector<size_t>& recv_bytes) {
  group.begin("allgatherv");
  const auto offsets = offsets_of(recv_bytes);
  char* data = static_cast<char*>(out);
  const auto me = static_cast<size_t>(group.rank());
  char* my_block = data + offsets[me];
  if (in != my_block && send_bytes > 0) std::memmove(my_block, in, send_bytes);
  if (group.size() == 1) return;
  const size_t longest = *std::max_element(recv_bytes.begin(), recv_bytes.end());
  const size_t steps = pieces(longest, group.capacity());
  for (size_t s = 0; s < steps; ++s) {
    const size_t mine = piece_length(send_bytes, s, group.capacity());
    if (mine > 0) cpu::copy_bytes(group.my_slot(), my_block + s * group.capacity(), mine);
    group.step();
    for (size_t p = 0; p < recv_bytes.size(); ++p) {
      if (p == me) continue;
      const size_t length = piece_length(recv_bytes[p], s, group.capacity());
      if (length > 0) {
        cpu::copy_bytes(data + offsets[p] + s * group.capacity(), group.slot(static_cast<int>(p)),
                        length);
      }
    }
  }
}

void alltoallv(Group& group, const void* in, const std::vector<size_t>& send_bytes, void* out,
               const std::vector<size_t>& recv_bytes) {
  group.begin("alltoallv");
  const auto me = static_cast<size_t>(group.rank());
  const auto n = static_cast<size_t>(group.size());
  size_t in_bytes = 0;
  size_t out_bytes = 0;
  for (size_t p = 0; p < n; ++p) {
    in_bytes += send_bytes[p];
    out_bytes += recv_bytes[p];
  }
  std::vector<char> staged;
  const char* send = static_cast<const char*>(in);
  if (overlaps(in, in_bytes, out, out_bytes)) {
    staged.assign(send, send + in_bytes);
    send = staged.data();
  }
  const auto send_offsets = offsets_of(send_bytes);
  const auto recv_offsets = offsets_of(recv_bytes);
  char* data = static_cast<char*>(out);
  if (n > 1) {
    const size_t part = per_destination(group);
    // First step: how many pieces each rank needs (the longest of its blocks decides).
    uint64_t needed = 0;
    for (size_t p = 0; p < n; ++p) {
      if (p == me) continue;
      needed = std::max<uint64_t>(needed, pieces(std::max(send_bytes[p], recv_bytes[p]), part));
    }
    std::memcpy(group.my_slot(), &needed, sizeof(needed));
    group.step();
    uint64_t steps = 0;
    for (size_t p = 0; p < n; ++p) {
      uint64_t theirs = 0;
      std::memcpy(&theirs, group.slot(static_cast<int>(p)), sizeof(theirs));
      steps = std::max(steps, theirs);
    }
    for (size_t s = 0; s < steps; ++s) {
      char* slot = group.my_slot();
      for (size_t p = 0; p < n; ++p) {
        const size_t length = p == me ? 0 : piece_length(send_bytes[p], s, part);
        if (length > 0) {
          cpu::copy_bytes(slot + p * part, send + send_offsets[p] + s * part, length);
        }
      }
      group.step();
      for (size_t p = 0; p < n; ++p) {
        const size_t length = p == me ? 0 : piece_length(recv_bytes[p], s, part);
        if (length > 0) {
          cpu::copy_bytes(data + recv_offsets[p] + s * part,
                          group.slot(static_cast<int>(p)) + me * part, length);
        }
      }
    }
  }
  if (send_bytes[me] > 0)
    std::memmove(data + recv_offsets[me], send + send_offsets[me], send_bytes[me]);
}

void reducescatter(Group& group, const void* in, void* out, const std::vector<size_t>& recv_counts,
                   DataType type, ReduceOp op) {
  group.begin("reducescatter");
  const size_t esize = element_size(type);
  const auto me = static_cast<size_t>(group.rank());
  const auto n = static_cast<size_t>(group.size());
  size_t total = 0;
  for (size_t count : recv_counts) total += count;
  if (total == 0) return;
  std::vector<char> staged;
  const char* input = static_cast<const char*>(in);
  if (overlaps(in, total * esize, out, recv_counts[me] * esize)) {
    staged.assign(input, input + total * esize);
    input = staged.data();
  }
  const auto offsets = offsets_of(recv_counts);
  char* result = static_cast<char*>(out);
  if (n == 1) {
    std::memmove(result, input, recv_counts[0] * esize);
    return;
  }
  const size_t part_bytes = per_destination(group);
  const size_t part = part_bytes / esize;  // elements per destination per step
  const size_t steps = pieces(*std::max_element(recv_counts.begin(), recv_counts.end()), part);
  for (size_t s = 0; s < steps; ++s) {
    char* slot = group.my_slot();
    for (size_t p = 0; p < n; ++p) {
      const size_t k = piece_length(recv_counts[p], s, part);
      if (k > 0) {
        cpu::copy_bytes(slot + p * part_bytes, input + (offsets[p] + s * part) * esize, k * esize);
      }
    }
    group.step();
    const size_t k = piece_length(recv_counts[me], s, part);
    if (k == 0) continue;
    char* target = result + s * part * esize;
    cpu::reduce_to(target, group.slot(0) + me * part_bytes, group.slot(1) + me * part_bytes, k,
                   type, op);
    for (int p = 2; p < group.size(); ++p) {
      cpu::reduce_into(target, group.slot(p) + me * part_bytes, k, type, op);
    }
  }
}

void barrier(Group& group) {
  group.begin("barrier");
  if (group.size() > 1) group.step();
}

std::vector<std::string> allgather_strings(Group& group, const char* op, const std::string& mine) {
  group.begin(op);
  const auto n = static_cast<size_t>(group.size());
  std::vector<std::string> all(n);
  if (n == 1) {
    all[0] = mine;
    return all;
  }
  const size_t capacity = group.capacity();
  const size_t first = capacity - sizeof(uint64_t);  // the first step also carries the length
  const uint64_t length = mine.size();
  char* slot = group.my_slot();
  std::memcpy(slot, &length, sizeof(length));
  std::memcpy(slot + sizeof(length), mine.data(), std::min<size_t>(first, mine.size()));
  group.step();
  size_t steps = 0;
  for (size_t p = 0; p < n; ++p) {
    uint64_t theirs = 0;
    const char* from = group.slot(static_cast<int>(p));
    std::memcpy(&theirs, from, sizeof(theirs));
    all[p].resize(theirs);
    const size_t head = std::min<size_t>(first, theirs);
    std::memcpy(all[p].data(), from + sizeof(theirs), head);
    steps = std::max(steps, pieces(theirs - head, capacity));
  }
  for (size_t s = 0; s < steps; ++s) {
    const size_t at = first + s * capacity;
    if (mine.size() > at) {
      std::memcpy(group.my_slot(), mine.data() + at, std::min(capacity, mine.size() - at));
    }
    group.step();
    for (size_t p = 0; p < n; ++p) {
      if (all[p].size() > at) {
        std::memcpy(all[p].data() + at, group.slot(static_cast<int>(p)),
                    std::min(capacity, all[p].size() - at));
      }
    }
  }
  return all;
}

}  // namespace runrun::shm
