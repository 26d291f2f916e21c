#include "ops/gloo/gloo_control_channel.h"

#include <algorithm>
#include <string>
#include <utility>

#include "common/errors.h"
#include "ops/base/backend_checks.h"
#include "ops/algorithms/recursive_doubling.h"
#include "ops/gloo/gloo_exchange.h"
#include "ops/gloo/gloo_step_transport.h"

namespace runrun::gloo_backend {

namespace {

// Up to this many ranks a negotiation vector goes to every other rank in one step (N-1 small
// messages per rank, one round trip); beyond, recursive doubling (one message per step,
// ceil(log2 N) steps, two more when N is not a power of two). At 4 ranks on one host the two
// measured alike (4-byte allreduce through the runtime, 166-207 us either way, a loaded
// 2-core machine); the direct step is kept there.
constexpr int kDirectExchangeMaxRanks = 4;

// Bytes per peer posted ahead for a negotiation round at first: the bits of a response cache of
// up to 1,984 slots (2 words per 64 slots, and one of flags); larger caches post more once.
constexpr size_t kRoundCapacity = 512;

// Negotiation vectors are small (a few words per cache slot): every rank sends its words to
// every other rank and combines locally, one step. Returns every rank's words, by rank.
std::vector<std::vector<uint64_t>> allgather_words(Mesh& mesh, Guard& guard, const char* op,
                                                   const std::vector<uint64_t>& words) {
  const int size = mesh.size();
  std::vector<std::vector<uint64_t>> all(static_cast<size_t>(size), words);
  std::vector<Transfer> sends;
  std::vector<Transfer> receives;
  const size_t bytes = words.size() * sizeof(uint64_t);
  for (int p = 0; p < size; ++p) {
    if (p == mesh.rank()) continue;
    sends.push_back({p, const_cast<uint64_t*>(words.data()), bytes});
    receives.push_back({p, all[static_cast<size_t>(p)].data(), bytes});
  }
  exchange(mesh, guard, op, guard.deadline(), sends, receives);
  return all;
}

void and_words(uint64_t* mine, const uint64_t* other, size_t n) {
  for (size_t i = 0; i < n; ++i) mine[i] &= other[i];
}

}  // namespace

void allreduce_words(Mesh& mesh, Guard& guard, const char* op, std::vector<uint64_t>& words,
                     WordCombine combine) {
  guard.check_usable(op);
  const int size = mesh.size();
  if (words.empty() || size == 1) return;
  if (size <= kDirectExchangeMaxRanks) {
    for (const auto& other : allgather_words(mesh, guard, op, words)) {
      combine(words.data(), other.data(), words.size());
    }
    return;
  }
  GlooStepTransport transport(mesh, guard, op, guard.deadline());
  const algorithms::Reduction reduction{
      sizeof(uint64_t), [combine](void* into, const void* from, size_t count) {
        combine(static_cast<uint64_t*>(into), static_cast<const uint64_t*>(from), count);
      }};
  std::vector<uint64_t> scratch(words.size());
  algorithms::allreduce_recursive_doubling(transport, words.data(), words.size(), reduction,
                                           scratch.data());
}

void allreduce_min(Mesh& mesh, Guard& guard, const char* op, std::vector<uint64_t>& values) {
  allreduce_words(mesh, guard, op, values, [](uint64_t* mine, const uint64_t* other, size_t n) {
    for (size_t i = 0; i < n; ++i) mine[i] = std::min(mine[i], other[i]);
  });
}

GlooControlChannel::GlooControlChannel(std::shared_ptr<::gloo::rendezvous::Store> store,
                                       std::string prefix, int rank, int size,
                                       std::shared_ptr<::gloo::transport::Device> device,
                                       GlooChannelOptions options)
    : store_(std::move(store)),
      prefix_(std::move(prefix)),
      device_(std::move(device)),
      options_(options),
      rank_(rank),
      size_(size),
      guard_(std::make_unique<Guard>(rank, options.collective_timeout)),
      mesh_(std::make_unique<Mesh>(*store_, prefix_, rank, size, device_, options.connect_timeout)),
      rounds_(*mesh_, kRoundCapacity) {
  guard_->watch(mesh_.get());
}

GlooControlChannel::~GlooControlChannel() = default;

std::unique_ptr<ControlChannel> GlooControlChannel::create_subgroup(const std::vector<int>& ranks) {
  const char* op = "control create_subgroup";
  guard_->check_usable(op);
  backend_checks::check_subgroup_ranks(op, rank_, size_, ranks);
  // The same agreement as GlooBackend::create_subgroup: list fingerprint and sequence number.
  const uint64_t hash = backend_checks::ranks_fingerprint(ranks);
  const uint64_t number = subgroups_created_++;
  std::vector<uint64_t> agreed{hash, ~hash, number, ~number};
  allreduce_min(*mesh_, *guard_, op, agreed);
  if (agreed[0] != hash || agreed[1] != ~hash || agreed[2] != number || agreed[3] != ~number) {
    throw MismatchError(RUNRUN_WHERE, std::string(op) + " on rank " + std::to_string(rank_) +
                                          ": ranks passed different member lists (this rank: " +
                                          backend_checks::to_string({ranks.begin(), ranks.end()}) +
                                          "); every rank must pass the same sorted list");
  }
  const auto me = std::lower_bound(ranks.begin(), ranks.end(), rank_);
  if (me == ranks.end() || *me != rank_) return nullptr;
  return std::make_unique<GlooControlChannel>(store_, prefix_ + "/set" + std::to_string(number),
                                              static_cast<int>(me - ranks.begin()),
                                              static_cast<int>(ranks.size()), device_, options_);
}

void GlooControlChannel::check_root(const char* op, int root) const {
  if (root >= 0 && root < size_) return;
  throw InvalidArgumentError(RUNRUN_WHERE, std::string(op) + " on rank " + std::to_string(rank_) +
                                               ": root " + std::to_string(root) +
                                               " is not in [0, " + std::to_string(size_) + ")");
}

void GlooControlChannel::allreduce_and(std::vector<uint64_t>& bits) {
  allreduce_words(*mesh_, *guard_, "control allreduce_and", bits, and_words);
}

void GlooControlChannel::round_allreduce_and(std::vector<uint64_t>& bits) {
  if (size_ > kDirectExchangeMaxRanks) {
    allreduce_and(bits);
    return;
  }
  const std::vector<uint64_t> mine = bits;  // sent while `bits` takes the others' in
  rounds_.exchange(*guard_, "control allreduce_and", guard_->deadline(), mine.data(),
                   mine.size() * sizeof(uint64_t), [&](int, const void* other) {
                     and_words(bits.data(), static_cast<const uint64_t*>(other), bits.size());
                   });
}

std::vector<std::string> GlooControlChannel::gather(const std::string& bytes, int root) {
  const char* op = "control gather";
  check_root(op, root);
  guard_->check_usable(op);
  if (size_ == 1) return {bytes};
  const auto deadline = guard_->deadline();
  const bool is_root = rank_ == root;
  // First every rank's length, then the bytes.
  uint64_t length = bytes.size();
  std::vector<uint64_t> lengths(static_cast<size_t>(size_), 0);
  std::vector<Transfer> sends;
  std::vector<Transfer> receives;
  if (is_root) {
    for (int p = 0; p < size_; ++p) {
      if (p != root) receives.push_back({p, &lengths[static_cast<size_t>(p)], sizeof(uint64_t)});
    }
  } else {
    sends.push_back({root, &length, sizeof(uint64_t)});
  }
  exchange(*mesh_, *guard_, op, deadline, sends, receives);
  std::vector<std::string> gathered(is_root ? static_cast<size_t>(size_) : 0);
  sends.clear();
  receives.clear();
  if (is_root) {
    for (int p = 0; p < size_; ++p) {
      auto& text = gathered[static_cast<size_t>(p)];
      if (p == root) {
        text = bytes;
        continue;
      }
      text.assign(lengths[static_cast<size_t>(p)], '\0');
      receives.push_back({p, text.data(), text.size()});
    }
  } else {
    sends.push_back({root, const_cast<char*>(bytes.data()), bytes.size()});
  }
  exchange(*mesh_, *guard_, op, deadline, sends, receives);
  return gathered;
}

void GlooControlChannel::broadcast(std::string& bytes, int root) {
  const char* op = "control broadcast";
  check_root(op, root);
  guard_->check_usable(op);
  if (size_ == 1) return;
  const auto deadline = guard_->deadline();
  uint64_t length = bytes.size();
  std::vector<Transfer> sends;
  std::vector<Transfer> receives;
  // Up to kDirectExchangeMaxRanks the root sends to every rank in one step; beyond, a binomial
  // tree: ceil(log2 N) steps, each rank sending at most once per step and receiving once, so
  // the root sends ceil(log2 N) messages instead of N-1. Every rank takes every step (idle ones
  // draw their slots with nothing to move), so the mesh's slots stay aligned.
  const int relative = (rank_ - root + size_) % size_;
  const auto absolute = [&](int index) { return (index + root) % size_; };
  const auto to_everyone = [&](void* data, size_t size) {
    if (size_ <= kDirectExchangeMaxRanks) {
      sends.clear();
      receives.clear();
      if (rank_ == root) {
        for (int p = 0; p < size_; ++p) {
          if (p != root) sends.push_back({p, data, size});
        }
      } else {
        receives.push_back({root, data, size});
      }
      exchange(*mesh_, *guard_, op, deadline, sends, receives);
      return;
    }
    // Step `mask` (1, 2, 4, ...): the ranks below it have the data and send it `mask` on.
    for (int mask = 1; mask < size_; mask <<= 1) {
      sends.clear();
      receives.clear();
      if (relative < mask && relative + mask < size_) {
        sends.push_back({absolute(relative + mask), data, size});
      } else if (relative >= mask && relative < 2 * mask) {
        receives.push_back({absolute(relative - mask), data, size});
      }
      exchange(*mesh_, *guard_, op, deadline, sends, receives);
    }
  };
  to_everyone(&length, sizeof(length));
  if (rank_ != root) bytes.assign(length, '\0');
  to_everyone(bytes.data(), bytes.size());
}

}  // namespace runrun::gloo_backend
