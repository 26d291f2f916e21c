#include "ops/shm/shm_control_channel.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "common/errors.h"
#include "ops/base/backend_checks.h"
#include "ops/shm/shm_collectives.h"

namespace runrun::shm {
namespace {

std::string bytes_of(const std::vector<uint64_t>& words) {
  return std::string(reinterpret_cast<const char*>(words.data()), words.size() * sizeof(uint64_t));
}

}  // namespace

ShmControlChannel::ShmControlChannel(std::shared_ptr<Board> board, std::string key,
                                     std::unique_ptr<Group> group, GroupOptions options)
    : board_(std::move(board)), key_(std::move(key)), group_(std::move(group)), options_(options) {}

void ShmControlChannel::check_root(const char* op, int root) const {
  if (root >= 0 && root < group_->size()) return;
  throw InvalidArgumentError(RUNRUN_WHERE, std::string(op) + " on rank " +
                                               std::to_string(group_->rank()) + ": root " +
                                               std::to_string(root) + " is not in [0, " +
                                               std::to_string(group_->size()) + ")");
}

void ShmControlChannel::allreduce_and(std::vector<uint64_t>& bits) {
  const char* op = "control allreduce_and";
  group_->begin(op);
  if (bits.empty() || group_->size() == 1) return;
  const size_t bytes = bits.size() * sizeof(uint64_t);
  if (bytes <= group_->capacity()) {  // one step, read in place
    std::memcpy(group_->my_slot(), bits.data(), bytes);
    group_->step();
    for (int p = 0; p < group_->size(); ++p) {
      const auto* theirs = reinterpret_cast<const uint64_t*>(group_->slot(p));
      for (size_t i = 0; i < bits.size(); ++i) bits[i] &= theirs[i];
    }
    return;
  }
  for (const auto& other : allgather_strings(*group_, op, bytes_of(bits))) {
    std::vector<uint64_t> words(bits.size());
    std::memcpy(words.data(), other.data(), std::min(other.size(), bytes));
    for (size_t i = 0; i < bits.size(); ++i) bits[i] &= words[i];
  }
}

std::vector<std::string> ShmControlChannel::gather(const std::string& bytes, int root) {
  const char* op = "control gather";
  check_root(op, root);
  auto all = allgather_strings(*group_, op, bytes);
  if (group_->rank() != root) return {};
  return all;
}

void ShmControlChannel::broadcast(std::string& bytes, int root) {
  const char* op = "control broadcast";
  check_root(op, root);
  const bool is_root = group_->rank() == root;
  auto all = allgather_strings(*group_, op, is_root ? bytes : std::string());
  if (!is_root) bytes = std::move(all[static_cast<size_t>(root)]);
}

std::unique_ptr<ControlChannel> ShmControlChannel::create_subgroup(const std::vector<int>& ranks) {
  const char* op = "control create_subgroup";
  group_->begin(op);
  backend_checks::check_subgroup_ranks(op, group_->rank(), group_->size(), ranks);
  // Every rank must pass the same list and be at the same subgroup number.
  const uint64_t hash = backend_checks::ranks_fingerprint(ranks);
  const uint64_t number = subgroups_created_++;
  const std::vector<uint64_t> agreed{hash, number};
  for (const auto& other : allgather_strings(*group_, op, bytes_of(agreed))) {
    if (other != bytes_of(agreed)) {
      throw MismatchError(RUNRUN_WHERE,
                          std::string(op) + " on rank " + std::to_string(group_->rank()) +
                              ": ranks passed different member lists (this rank: " +
                              backend_checks::to_string({ranks.begin(), ranks.end()}) +
                              "); every rank must pass the same sorted list");
    }
  }
  const auto me = std::lower_bound(ranks.begin(), ranks.end(), group_->rank());
  if (me == ranks.end() || *me != group_->rank()) return nullptr;
  const std::string key = key_ + "/set" + std::to_string(number);
  std::string why_not;
  auto group = Group::connect(*board_, key, static_cast<int>(me - ranks.begin()),
                              static_cast<int>(ranks.size()), options_, &why_not);
  if (!group) {
    throw InternalError(RUNRUN_WHERE,
                        std::string(op) + " on rank " + std::to_string(group_->rank()) +
                            ": the process set's shared-memory segment could not "
                            "be made: " +
                            why_not + "; RUNRUN_GLOO_SHM=0 turns the shared-memory path off");
  }
  return std::make_unique<ShmControlChannel>(board_, key, std::move(group), options_);
}

}  // namespace runrun::shm
