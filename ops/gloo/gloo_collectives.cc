// GlooBackend's data collectives, built from point-to-point exchanges (gloo_exchange.h). Each
// validates its arguments like every backend (backend_checks), takes the trivial paths
// (nothing to move, one rank) locally, and has one deadline for all its steps.
//
// Between hosts, beyond kDirectMaxRanks ranks, the collectives run the algorithms of
// ops/algorithms chosen by size (algorithm_choice.h; RUNRUN_GLOO_ALLREDUCE, _ALLGATHER,
// _BROADCAST and _REDUCESCATTER force one): the allreduce recursive doubling or
// halving-doubling, the allgather Bruck's or a ring, the broadcast a binomial tree or a
// scatter and a ring, the reducescatter recursive doubling or a ring, the barrier
// dissemination. Up to kDirectMaxRanks ranks (and alltoallv always) they are direct exchanges
// (every rank talks to every other in one step, which moves the same bytes per rank as a ring
// but in two steps instead of 2(n-1)):
// - allreduce: reduce-scatter (rank p reduces chunk p from every rank), then allgather; the
//   reduce-scatter moves each chunk in segments of about kSegmentBytes and reduces every segment
//   as soon as it has arrived, while later segments are still on the wire. Small allreduces
//   (at most kOneStepBytes sent per rank) take one step instead: every rank sends its whole
//   buffer to every other and reduces all of them in rank order (the same order everywhere, so
//   every rank gets the same bits); at that size the round trips, not the bytes, are the cost.
// - reducescatter: every rank sends block p to rank p, which reduces them in rank order;
// - allgatherv, alltoallv, broadcast: each block goes straight to the ranks that need it;
// - barrier: one byte to and from every rank.

#include <algorithm>
#include <cstring>
#include <vector>

#include "common/errors.h"
#include "ops/base/backend_checks.h"
#include "ops/base/block_layout.h"
#include "ops/cpu/copy_bytes.h"
#include "ops/cpu/reduce_kernels.h"
#include "ops/gloo/gloo_backend.h"
#include "ops/algorithms/allgather.h"
#include "ops/algorithms/barrier.h"
#include "ops/algorithms/broadcast.h"
#include "ops/algorithms/halving_doubling.h"
#include "ops/algorithms/recursive_doubling.h"
#include "ops/algorithms/reducescatter.h"
#include "ops/gloo/gloo_exchange.h"
#include "ops/gloo/gloo_step_transport.h"
#include "ops/shm/shm_collectives.h"

namespace runrun::gloo_backend {
namespace {

std::vector<char> copy_of(const void* data, size_t bytes) {
  std::vector<char> copy(bytes + 1);  // +1: data() is never null
  if (bytes > 0) std::memcpy(copy.data(), data, bytes);
  return copy;
}

// `type` and `op` as the algorithms' element-wise reduction.
algorithms::Reduction reduction_of(DataType type, ReduceOp op) {
  return {element_size(type), [type, op](void* into, const void* from, size_t elements) {
            cpu::reduce_into(into, from, elements, type, op);
          }};
}

constexpr size_t kOneStepBytes = size_t{64} << 10;
constexpr size_t kSegmentBytes = size_t{1} << 20;

// The segments (element counts) a reduce-scatter chunk of `elements` moves in: as many as it
// takes to stay near kSegmentBytes, at most kLanes (one lane each); the same on every rank.
std::vector<size_t> segments_of(size_t elements, size_t esize) {
  const size_t wanted = (elements * esize + kSegmentBytes - 1) / kSegmentBytes;
  const size_t parts = std::clamp<size_t>(wanted, 1, kLanes);
  return even_split(elements, parts);
}

// Copies `bytes` from `in` to `out` (either may overlap the other), for an allreduce in place.
void copy_for_in_place(const void* in, void* out, size_t bytes) {
  const auto* from = static_cast<const char*>(in);
  auto* to = static_cast<char*>(out);
  const bool apart = from + bytes <= to || to + bytes <= from;
  if (apart)
    cpu::copy_bytes(out, in, bytes);  // memcpy without its alignment cliff
  else
    std::memmove(out, in, bytes);
}

// The reduce-scatter's sends: chunk p of `data` to rank p, segment s on lane s.
void add_chunk_sends(std::vector<Transfer>& sends, char* data, const std::vector<size_t>& chunks,
                     const std::vector<size_t>& offsets, size_t esize, int rank, int size) {
  for (int p = 0; p < size; ++p) {
    if (p == rank) continue;
    const auto q = static_cast<size_t>(p);
    const auto segments = segments_of(chunks[q], esize);
    size_t at = offsets[q] * esize;
    for (size_t s = 0; s < segments.size(); ++s) {
      sends.push_back({p, data + at, segments[s] * esize, static_cast<uint8_t>(s)});
      at += segments[s] * esize;
    }
  }
}

}  // namespace

char* GlooBackend::scratch(size_t bytes) {
  if (scratch_.size() < bytes + 1) scratch_.resize(bytes + 1);  // +1: data() is never null
  return scratch_.data();
}

void GlooBackend::allreduce_one_step(char* data, size_t count, DataType type, ReduceOp op,
                                     Guard::Clock::time_point deadline) {
  const size_t bytes = count * element_size(type);
  const auto n = static_cast<size_t>(size());
  const auto me = static_cast<size_t>(rank());
  char* all = scratch(n * bytes);  // block p: rank p's buffer
  if (bytes <= kMailboxMaxBytes) {
    small_->exchange(*guard_, "allreduce", deadline, data, bytes, [&](int peer, const void* from) {
      std::memcpy(all + static_cast<size_t>(peer) * bytes, from, bytes);
    });
  } else {
    std::vector<Transfer> sends;
    std::vector<Transfer> receives;
    for (size_t p = 0; p < n; ++p) {
      if (p == me) continue;
      sends.push_back({static_cast<int>(p), data, bytes});
      receives.push_back({static_cast<int>(p), all + p * bytes, bytes});
    }
    exchange(*data_, *guard_, "allreduce", deadline, sends, receives);
  }
  std::memcpy(all + me * bytes, data, bytes);
  std::memcpy(data, all, bytes);
  for (size_t p = 1; p < n; ++p) cpu::reduce_into(data, all + p * bytes, count, type, op);
}

void GlooBackend::run_allreduce(const void* in, void* out, size_t count, DataType type,
                                ReduceOp op) {
  const char* name = "allreduce";
  backend_checks::check_reduce_op(*this, name, op);
  guard_->check_usable(name);
  if (count == 0) return;  // the same decision on every rank
  const size_t esize = element_size(type);
  if (in != out) copy_for_in_place(in, out, count * esize);  // then reduce in place
  if (size() == 1) return;
  if (shm_) return shm::allreduce(*shm_, out, count, type, op);
  const auto deadline = guard_->deadline();
  char* data = static_cast<char*>(out);
  auto algorithm = options_.algorithms.allreduce;
  if (algorithm == algorithms::AllreduceAlgorithm::kAuto) {
    algorithm = algorithms::choose_allreduce(count * esize, size());
  }
  if (algorithm != algorithms::AllreduceAlgorithm::kDirect) {
    GlooStepTransport transport(*data_, *guard_, name, deadline);
    const algorithms::Reduction reduction = reduction_of(type, op);
    char* spare = scratch(count * esize);
    if (algorithm == algorithms::AllreduceAlgorithm::kRecursiveDoubling) {
      algorithms::allreduce_recursive_doubling(transport, data, count, reduction, spare);
    } else {
      algorithms::allreduce_halving_doubling(transport, data, count, reduction, spare);
    }
    return;
  }
  if (count * esize * static_cast<size_t>(size() - 1) <= kOneStepBytes) {
    allreduce_one_step(data, count, type, op, deadline);
    return;
  }
  const auto me = static_cast<size_t>(rank());
  const auto chunks = even_split(count, static_cast<size_t>(size()));
  const auto offsets = offsets_of(chunks);
  char* my_chunk = data + offsets[me] * esize;
  const size_t my_bytes = chunks[me] * esize;
  // Reduce-scatter: chunk p of every rank goes to rank p, segment s on lane s. Peer p's copy of
  // this rank's chunk lands in block `slot(p)` of the scratch.
  const auto slot = [me](size_t p) { return p < me ? p : p - 1; };
  char* received = scratch(static_cast<size_t>(size() - 1) * my_bytes);
  std::vector<Transfer> sends;
  std::vector<Transfer> receives;
  add_chunk_sends(sends, data, chunks, offsets, esize, rank(), size());
  const auto my_segments = segments_of(chunks[me], esize);
  const auto my_segment_offsets = offsets_of(my_segments);
  for (size_t s = 0; s < my_segments.size(); ++s) {  // index: s * (size - 1) + slot(p)
    for (int p = 0; p < size(); ++p) {
      if (p == rank()) continue;
      char* block = received + slot(static_cast<size_t>(p)) * my_bytes;
      receives.push_back({p, block + my_segment_offsets[s] * esize, my_segments[s] * esize,
                          static_cast<uint8_t>(s)});
    }
  }
  PostedExchange scatter(*data_, *guard_, name, deadline, sends, receives);
  const size_t peers = static_cast<size_t>(size() - 1);
  for (size_t s = 0; s < my_segments.size(); ++s) {
    for (size_t k = 0; k < peers; ++k) scatter.wait_receive(s * peers + k);
    const size_t at = my_segment_offsets[s] * esize;
    for (int p = 0; p < size(); ++p) {  // own data first, then the others in rank order
      if (p == rank()) continue;
      cpu::reduce_into(my_chunk + at, received + slot(static_cast<size_t>(p)) * my_bytes + at,
                       my_segments[s], type, op);
    }
  }
  scatter.finish();  // every send done: the allgather may now overwrite the other chunks
  // Allgather: every rank's reduced chunk to every rank.
  sends.clear();
  receives.clear();
  for (int p = 0; p < size(); ++p) {
    if (p == rank()) continue;
    const auto q = static_cast<size_t>(p);
    sends.push_back({p, my_chunk, my_bytes});
    receives.push_back({p, data + offsets[q] * esize, chunks[q] * esize});
  }
  exchange(*data_, *guard_, name, deadline, sends, receives);
}

void GlooBackend::run_allgatherv(const void* in, size_t send_bytes, void* out,
                                 const std::vector<size_t>& recv_bytes) {
  const char* name = "allgatherv";
  backend_checks::check_allgatherv(*this, send_bytes, recv_bytes);
  guard_->check_usable(name);
  const size_t total = backend_checks::total(recv_bytes);
  if (total == 0) return;  // the same decision on every rank
  if (shm_) return shm::allgatherv(*shm_, in, send_bytes, out, recv_bytes);
  const auto offsets = offsets_of(recv_bytes);
  char* data = static_cast<char*>(out);
  char* my_block = data + offsets[static_cast<size_t>(rank())];
  if (in != my_block && send_bytes > 0) std::memmove(my_block, in, send_bytes);
  if (size() == 1) return;
  auto algorithm = options_.algorithms.allgather;
  if (algorithm == algorithms::AllgatherAlgorithm::kAuto) {
    algorithm = algorithms::choose_allgather(total, size());
  }
  if (algorithm != algorithms::AllgatherAlgorithm::kDirect) {
    GlooStepTransport transport(*data_, *guard_, name, guard_->deadline());
    const auto spans = algorithms::spans_in_rank_order(recv_bytes);
    if (algorithm == algorithms::AllgatherAlgorithm::kBruck) {
      algorithms::allgather_bruck(transport, data, spans, scratch(total));
    } else {
      algorithms::allgather_ring(transport, data, spans);
    }
    return;
  }
  std::vector<Transfer> sends;
  std::vector<Transfer> receives;
  for (int p = 0; p < size(); ++p) {
    if (p == rank()) continue;
    const auto q = static_cast<size_t>(p);
    sends.push_back({p, my_block, send_bytes});
    receives.push_back({p, data + offsets[q], recv_bytes[q]});
  }
  exchange(*data_, *guard_, name, guard_->deadline(), sends, receives);
}

void GlooBackend::run_broadcast(void* buffer, size_t bytes, int root) {
  const char* name = "broadcast";
  backend_checks::check_root(*this, name, root);
  guard_->check_usable(name);
  if (bytes == 0 || size() == 1) return;
  if (shm_) return shm::broadcast(*shm_, buffer, bytes, root);
  auto algorithm = options_.algorithms.broadcast;
  if (algorithm == algorithms::BroadcastAlgorithm::kAuto) {
    algorithm = algorithms::choose_broadcast(bytes, size());
  }
  if (algorithm != algorithms::BroadcastAlgorithm::kDirect) {
    GlooStepTransport transport(*data_, *guard_, name, guard_->deadline());
    auto* data = static_cast<char*>(buffer);
    if (algorithm == algorithms::BroadcastAlgorithm::kBinomialTree) {
      algorithms::broadcast_binomial_tree(transport, data, bytes, root);
    } else {
      algorithms::broadcast_scatter_allgather(transport, data, bytes, root);
    }
    return;
  }
  std::vector<Transfer> sends;
  std::vector<Transfer> receives;
  if (rank() == root) {
    for (int p = 0; p < size(); ++p) {
      if (p != root) sends.push_back({p, buffer, bytes});
    }
  } else {
    receives.push_back({root, buffer, bytes});
  }
  exchange(*data_, *guard_, name, guard_->deadline(), sends, receives);
}

void GlooBackend::run_alltoallv(const void* in, const std::vector<size_t>& send_bytes, void* out,
                                const std::vector<size_t>& recv_bytes) {
  const char* name = "alltoallv";
  backend_checks::check_per_rank(*this, name, "send_bytes", send_bytes.size());
  backend_checks::check_per_rank(*this, name, "recv_bytes", recv_bytes.size());
  guard_->check_usable(name);
  if (shm_) return shm::alltoallv(*shm_, in, send_bytes, out, recv_bytes);
  const size_t in_bytes = backend_checks::total(send_bytes);
  const size_t out_bytes = backend_checks::total(recv_bytes);
  std::vector<char> staged;
  char* send = static_cast<char*>(const_cast<void*>(in));
  if (backend_checks::overlaps(in, in_bytes, out, out_bytes)) {
    staged = copy_of(in, in_bytes);
    send = staged.data();
  }
  const auto send_offsets = offsets_of(send_bytes);
  const auto recv_offsets = offsets_of(recv_bytes);
  char* data = static_cast<char*>(out);
  std::vector<Transfer> sends;
  std::vector<Transfer> receives;
  for (int p = 0; p < size(); ++p) {
    if (p == rank()) continue;
    const auto q = static_cast<size_t>(p);
    sends.push_back({p, send + send_offsets[q], send_bytes[q]});
    receives.push_back({p, data + recv_offsets[q], recv_bytes[q]});
  }
  if (size() > 1) exchange(*data_, *guard_, name, guard_->deadline(), sends, receives);
  const auto me = static_cast<size_t>(rank());
  if (send_bytes[me] > 0)
    std::memmove(data + recv_offsets[me], send + send_offsets[me], send_bytes[me]);
}

void GlooBackend::run_reducescatter(const void* in, void* out,
                                    const std::vector<size_t>& recv_counts, DataType type,
                                    ReduceOp op) {
  const char* name = "reducescatter";
  backend_checks::check_reduce_op(*this, name, op);
  backend_checks::check_per_rank(*this, name, "recv_counts", recv_counts.size());
  guard_->check_usable(name);
  const size_t total = backend_checks::total(recv_counts);
  if (total == 0) return;  // the same decision on every rank
  if (shm_) return shm::reducescatter(*shm_, in, out, recv_counts, type, op);
  const size_t esize = element_size(type);
  const auto me = static_cast<size_t>(rank());
  const size_t mine = recv_counts[me];
  const size_t my_bytes = mine * esize;
  const auto offsets = offsets_of(recv_counts);
  const char* input = static_cast<const char*>(in);
  auto algorithm = options_.algorithms.reducescatter;
  if (algorithm == algorithms::ReducescatterAlgorithm::kAuto) {
    algorithm = algorithms::choose_reducescatter(total * esize, size());
  }
  if (size() > 1 && algorithm != algorithms::ReducescatterAlgorithm::kDirect) {
    // The algorithms reduce a copy of the input (`in` may overlap `out`), then this rank's
    // block goes to `out`.
    const size_t total_bytes = total * esize;
    const size_t largest = *std::max_element(recv_counts.begin(), recv_counts.end()) * esize;
    char* work = scratch(total_bytes + std::max(total_bytes, largest));
    char* spare = work + total_bytes;
    std::memcpy(work, input, total_bytes);
    GlooStepTransport transport(*data_, *guard_, name, guard_->deadline());
    const algorithms::Reduction reduction = reduction_of(type, op);
    if (algorithm == algorithms::ReducescatterAlgorithm::kRing) {
      algorithms::reducescatter_ring(transport, work, recv_counts, reduction, spare);
    } else {
      algorithms::reducescatter_recursive_doubling(transport, work, recv_counts, reduction, spare);
    }
    if (mine > 0) std::memmove(out, work + offsets[me] * esize, my_bytes);
    return;
  }
  char* received = scratch(static_cast<size_t>(size()) * my_bytes);
  if (size() > 1) {
    std::vector<Transfer> sends;
    std::vector<Transfer> receives;
    for (int p = 0; p < size(); ++p) {
      if (p == rank()) continue;
      const auto q = static_cast<size_t>(p);
      sends.push_back({p, const_cast<char*>(input) + offsets[q] * esize, recv_counts[q] * esize});
      receives.push_back({p, received + q * my_bytes, my_bytes});
    }
    exchange(*data_, *guard_, name, guard_->deadline(), sends, receives);
  }
  // Every send completed: `out` may now overwrite the input it overlaps.
  if (mine == 0) return;
  std::memmove(out, input + offsets[me] * esize, my_bytes);
  for (int p = 0; p < size(); ++p) {
    if (p == rank()) continue;
    cpu::reduce_into(out, received + static_cast<size_t>(p) * my_bytes, mine, type, op);
  }
}

void GlooBackend::run_barrier() {
  const char* name = "barrier";
  guard_->check_usable(name);
  if (size() == 1) return;
  if (shm_) return shm::barrier(*shm_);
  if (size() > algorithms::kDirectMaxRanks) {
    GlooStepTransport transport(*data_, *guard_, name, guard_->deadline());
    return algorithms::barrier_dissemination(transport);
  }
  char token = 1;
  std::vector<char> tokens(static_cast<size_t>(size()));
  std::vector<Transfer> sends;
  std::vector<Transfer> receives;
  for (int p = 0; p < size(); ++p) {
    if (p == rank()) continue;
    sends.push_back({p, &token, 1});
    receives.push_back({p, &tokens[static_cast<size_t>(p)], 1});
  }
  exchange(*data_, *guard_, name, guard_->deadline(), sends, receives);
}

}  // namespace runrun::gloo_backend
