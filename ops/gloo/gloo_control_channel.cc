#include "ops/gloo/gloo_control_channel.h"

#include <algorithm>
#include <string>

#include "common/errors.h"
#include "ops/gloo/gloo_exchange.h"

namespace runrun::gloo_backend {

GlooControlChannel::GlooControlChannel(Mesh& mesh, Guard& guard)
    : mesh_(mesh), guard_(guard), rank_(mesh.rank()), size_(mesh.size()) {}

void GlooControlChannel::check_root(const char* op, int root) const {
  if (root >= 0 && root < size_) return;
  throw InvalidArgumentError(RUNRUN_WHERE, std::string(op) + " on rank " + std::to_string(rank_) +
                                               ": root " + std::to_string(root) +
                                               " is not in [0, " + std::to_string(size_) + ")");
}

// Negotiation vectors are small (a few words per cache slot): every rank sends its words to
// every other rank and combines locally, one step.
std::vector<std::vector<uint64_t>> GlooControlChannel::allgather_words(
    const char* op, const std::vector<uint64_t>& words) {
  std::vector<std::vector<uint64_t>> all(static_cast<size_t>(size_), words);
  std::vector<Transfer> sends;
  std::vector<Transfer> receives;
  const size_t bytes = words.size() * sizeof(uint64_t);
  for (int p = 0; p < size_; ++p) {
    if (p == rank_) continue;
    sends.push_back({p, const_cast<uint64_t*>(words.data()), bytes});
    receives.push_back({p, all[static_cast<size_t>(p)].data(), bytes});
  }
  exchange(mesh_, guard_, op, guard_.deadline(), sends, receives);
  return all;
}

void GlooControlChannel::allreduce_and(std::vector<uint64_t>& bits) {
  const char* op = "control allreduce_and";
  guard_.check_usable(op);
  if (bits.empty() || size_ == 1) return;
  for (const auto& other : allgather_words(op, bits)) {
    for (size_t i = 0; i < bits.size(); ++i) bits[i] &= other[i];
  }
}

void GlooControlChannel::allreduce_min(std::vector<uint64_t>& values) {
  const char* op = "control allreduce_min";
  guard_.check_usable(op);
  if (values.empty() || size_ == 1) return;
  for (const auto& other : allgather_words(op, values)) {
    for (size_t i = 0; i < values.size(); ++i) values[i] = std::min(values[i], other[i]);
  }
}

std::vector<std::string> GlooControlChannel::gather(const std::string& bytes, int root) {
  const char* op = "control gather";
  check_root(op, root);
  guard_.check_usable(op);
  if (size_ == 1) return {bytes};
  const auto deadline = guard_.deadline();
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
  exchange(mesh_, guard_, op, deadline, sends, receives);
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
  exchange(mesh_, guard_, op, deadline, sends, receives);
  return gathered;
}

void GlooControlChannel::broadcast(std::string& bytes, int root) {
  const char* op = "control broadcast";
  check_root(op, root);
  guard_.check_usable(op);
  if (size_ == 1) return;
  const auto deadline = guard_.deadline();
  uint64_t length = bytes.size();
  std::vector<Transfer> sends;
  std::vector<Transfer> receives;
  const auto to_everyone = [&](void* data, size_t size) {
    sends.clear();
    receives.clear();
    if (rank_ == root) {
      for (int p = 0; p < size_; ++p) {
        if (p != root) sends.push_back({p, data, size});
      }
    } else {
      receives.push_back({root, data, size});
    }
    exchange(mesh_, guard_, op, deadline, sends, receives);
  };
  to_everyone(&length, sizeof(length));
  if (rank_ != root) bytes.assign(length, '\0');
  to_everyone(bytes.data(), bytes.size());
}

}  // namespace runrun::gloo_backend
