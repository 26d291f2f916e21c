#include "ops/local/local_control_channel.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <utility>

#include "common/errors.h"
#include "ops/base/backend_checks.h"

namespace runrun {

LocalControlChannel::LocalControlChannel(std::shared_ptr<LocalEndpoint> endpoint)
    : endpoint_(std::move(endpoint)) {}

void LocalControlChannel::check_root(const char* op, int root) const {
  const int size = endpoint_->world()->size();
  if (root >= 0 && root < size) return;
  throw InvalidArgumentError(
      RUNRUN_WHERE, std::string(op) + " on rank " + std::to_string(endpoint_->rank()) + ": root " +
                        std::to_string(root) + " is not in [0, " + std::to_string(size) + ")");
}

void LocalControlChannel::allreduce_and(std::vector<uint64_t>& bits) {
  const size_t bytes = bits.size() * sizeof(uint64_t);
  auto result = endpoint_->exchange(
      LocalChannel::kControl, LocalEndpoint::stage(bits.data(), bytes),
      "control allreduce_and words=" + std::to_string(bits.size()), "control allreduce_and");
  for (const auto& blob : result.contributions) {
    for (size_t i = 0; i < bits.size(); ++i) {
      uint64_t word = 0;
      std::memcpy(&word, blob->data() + i * sizeof(uint64_t), sizeof(word));
      bits[i] &= word;
    }
  }
}

std::vector<std::string> LocalControlChannel::gather(const std::string& bytes, int root) {
  check_root("control gather", root);
  auto result =
      endpoint_->exchange(LocalChannel::kControl, std::make_shared<const std::string>(bytes),
                          "control gather root=" + std::to_string(root), "control gather");
  std::vector<std::string> gathered;
  if (endpoint_->rank() != root) return gathered;
  gathered.reserve(result.contributions.size());
  for (const auto& blob : result.contributions) gathered.push_back(*blob);
  return gathered;
}

void LocalControlChannel::broadcast(std::string& bytes, int root) {
  check_root("control broadcast", root);
  const bool is_root = endpoint_->rank() == root;
  auto contribution =
      is_root ? std::make_shared<const std::string>(bytes) : LocalEndpoint::stage(nullptr, 0);
  auto result =
      endpoint_->exchange(LocalChannel::kControl, std::move(contribution),
                          "control broadcast root=" + std::to_string(root), "control broadcast");
  if (!is_root) bytes = *result.contributions[static_cast<size_t>(root)];
}

std::unique_ptr<ControlChannel> LocalControlChannel::create_subgroup(
    const std::vector<int>& ranks) {
  const int size = endpoint_->world()->size();
  const bool valid = !ranks.empty() && std::is_sorted(ranks.begin(), ranks.end()) &&
                     std::adjacent_find(ranks.begin(), ranks.end()) == ranks.end() &&
                     ranks.front() >= 0 && ranks.back() < size;
  const std::vector<size_t> shown(ranks.begin(), ranks.end());
  if (!valid) {
    throw InvalidArgumentError(
        RUNRUN_WHERE, "control create_subgroup on rank " + std::to_string(endpoint_->rank()) +
                          ": ranks must be non-empty, sorted, unique and in "
                          "[0, " +
                          std::to_string(size) + "), got " + backend_checks::to_string(shown));
  }
  auto result =
      endpoint_->exchange(LocalChannel::kControl, LocalEndpoint::stage(nullptr, 0),
                          "control create_subgroup ranks=" + backend_checks::to_string(shown),
                          "control create_subgroup");
  auto it = std::find(ranks.begin(), ranks.end(), endpoint_->rank());
  if (it == ranks.end()) return nullptr;
  auto world = endpoint_->world()->subgroup_world(LocalChannel::kControl, result.generation, ranks);
  return std::make_unique<LocalControlChannel>(
      std::make_shared<LocalEndpoint>(std::move(world), static_cast<int>(it - ranks.begin())));
}

void LocalControlChannel::abort() { endpoint_->abort(); }

}  // namespace runrun
