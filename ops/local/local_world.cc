#include "ops/local/local_world.h"

#include <string>
#include <utility>

#include "common/errors.h"
#include "ops/base/host_topology.h"

namespace runrun {
namespace {

std::vector<int> hosts_for(int size, int ranks_per_host) {
  if (size < 1) {
    throw InvalidArgumentError(RUNRUN_WHERE,
                               "LocalWorld: size must be at least 1, got " + std::to_string(size));
  }
  if (ranks_per_host < 0) {
    throw InvalidArgumentError(RUNRUN_WHERE, "LocalWorld: ranks_per_host must be >= 0, got " +
                                                 std::to_string(ranks_per_host));
  }
  std::vector<int> hosts(static_cast<size_t>(size), 0);
  for (int r = 0; r < size && ranks_per_host > 0; ++r)
    hosts[static_cast<size_t>(r)] = r / ranks_per_host;
  return hosts;
}

}  // namespace

LocalWorld::LocalWorld(int size, LocalWorldOptions options)
    : LocalWorld(hosts_for(size, options.ranks_per_host), options) {}

LocalWorld::LocalWorld(std::vector<int> host_of_rank, LocalWorldOptions options)
    : host_of_rank_(std::move(host_of_rank)),
      options_(options),
      gone_(host_of_rank_.size()),
      failed_(host_of_rank_.size(), false) {
  if (host_of_rank_.empty()) {
    throw InvalidArgumentError(RUNRUN_WHERE, "LocalWorld: a world needs at least one rank");
  }
  for (auto& channel : channels_) {
    channel.slots.resize(host_of_rank_.size());
    channel.signatures.resize(host_of_rank_.size());
    channel.present.assign(host_of_rank_.size(), false);
  }
}

Topology LocalWorld::topology_of(int rank) const {
  return topology_from_host_keys(host_of_rank_, rank);
}

void LocalWorld::fail_rank(int rank) {
  if (rank < 0 || rank >= size()) {
    throw InvalidArgumentError(RUNRUN_WHERE, "LocalWorld::fail_rank: rank " + std::to_string(rank) +
                                                 " is not in [0, " + std::to_string(size()) + ")");
  }
  std::vector<std::pair<std::shared_ptr<LocalWorld>, int>> affected;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    failed_[static_cast<size_t>(rank)] = true;
    mark_gone_locked(rank, "marked failed");
    for (const Child& child : children_) {
      auto world = child.world.lock();
      if (!world) continue;
      for (size_t i = 0; i < child.members.size(); ++i) {
        if (child.members[i] == rank) affected.emplace_back(world, static_cast<int>(i));
      }
    }
  }
  changed_.notify_all();
  for (auto& [world, child_rank] : affected) world->fail_rank(child_rank);
}

void LocalWorld::depart(int rank, const std::string& reason) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    mark_gone_locked(rank, reason);
  }
  changed_.notify_all();
}

void LocalWorld::wake_all() {
  { std::lock_guard<std::mutex> lock(mutex_); }
  changed_.notify_all();
}

void LocalWorld::mark_gone_locked(int rank, const std::string& reason) {
  auto& gone = gone_.at(static_cast<size_t>(rank));
  if (!gone) gone = Gone{losses_++, reason};
}

void LocalWorld::check_peers_locked(const ChannelState& state, int rank, const char* op) const {
  if (failed_[static_cast<size_t>(rank)]) {
    throw PeerFailureError(RUNRUN_WHERE, std::string(op) + ": rank " + std::to_string(rank) +
                                             " was marked failed (LocalWorld::fail_rank) and can "
                                             "no longer communicate");
  }
  // Of the missing peers that are gone, name the first one lost: the others usually failed
  // because of it.
  const Gone* first = nullptr;
  int first_rank = -1;
  for (int peer = 0; peer < size(); ++peer) {
    const auto& gone = gone_[static_cast<size_t>(peer)];
    if (peer == rank || state.present[static_cast<size_t>(peer)] || !gone) continue;
    if (!first || gone->order < first->order) {
      first = &*gone;
      first_rank = peer;
    }
  }
  if (first) {
    throw PeerFailureError(RUNRUN_WHERE, std::string(op) + " on rank " + std::to_string(rank) +
                                             ": lost rank " + std::to_string(first_rank) + " (" +
                                             first->reason + "); the group cannot continue");
  }
}

void LocalWorld::check_signatures(const std::vector<std::string>& signatures, int rank,
                                  const char* op) const {
  for (size_t r = 1; r < signatures.size(); ++r) {
    if (signatures[r] == signatures[0]) continue;
    throw MismatchError(
        RUNRUN_WHERE, std::string(op) + " seen from rank " + std::to_string(rank) +
                          ": ranks called different collectives: rank 0 called '" + signatures[0] +
                          "' but rank " + std::to_string(r) + " called '" + signatures[r] +
                          "'; every rank must issue the same ops in the same order");
  }
}

LocalWorld::ExchangeResult LocalWorld::exchange(LocalChannel channel, int rank, Blob contribution,
                                                const std::string& signature,
                                                const std::atomic<bool>& aborted, const char* op) {
  std::unique_lock<std::mutex> lock(mutex_);
  ChannelState& state = channels_[static_cast<int>(channel)];
  const auto me = static_cast<size_t>(rank);
  if (aborted.load()) {
    throw ShutDownError(RUNRUN_WHERE, std::string(op) + " on rank " + std::to_string(rank) +
                                          ": the backend was aborted (runtime shutting down)");
  }
  check_peers_locked(state, rank, op);
  if (state.present[me]) {
    throw InternalError(RUNRUN_WHERE, std::string(op) + " on rank " + std::to_string(rank) +
                                          ": entered while this rank's previous exchange never "
                                          "completed (the backend was used after an error)");
  }
  state.slots[me] = std::move(contribution);
  state.signatures[me] = signature;
  state.present[me] = true;
  const uint64_t generation = state.generation;
  if (++state.arrived == size()) {
    state.last_contributions = std::exchange(state.slots, std::vector<Blob>(state.slots.size()));
    state.last_signatures = state.signatures;
    state.present.assign(state.present.size(), false);
    state.arrived = 0;
    ++state.generation;
    changed_.notify_all();
  } else {
    const bool timed = options_.collective_timeout.count() > 0;
    const auto deadline = std::chrono::steady_clock::now() + options_.collective_timeout;
    while (state.generation == generation) {
      try {
        if (aborted.load()) {
          throw ShutDownError(RUNRUN_WHERE,
                              std::string(op) + " on rank " + std::to_string(rank) +
                                  ": the backend was aborted while waiting for peers");
        }
        check_peers_locked(state, rank, op);
        if (!timed) {
          changed_.wait(lock);
        } else if (changed_.wait_until(lock, deadline) == std::cv_status::timeout &&
                   state.generation == generation) {
          const std::string what =
              std::string(op) + " on rank " + std::to_string(rank) + " timed out after " +
              std::to_string(options_.collective_timeout.count()) + " ms waiting for peers";
          mark_gone_locked(rank, what);
          throw TimeoutError(RUNRUN_WHERE, what +
                                               ": a peer is stuck or gone; raise "
                                               "RUNRUN_COLLECTIVE_TIMEOUT if it is just slow");
        }
      } catch (...) {
        // Take the contribution back: an exchange this rank gave up on must not complete
        // without it on the other ranks.
        state.slots[me].reset();
        state.present[me] = false;
        --state.arrived;
        changed_.notify_all();
        throw;
      }
    }
  }
  ExchangeResult result{generation, state.last_contributions};
  std::vector<std::string> signatures = state.last_signatures;
  lock.unlock();
  check_signatures(signatures, rank, op);
  return result;
}

std::shared_ptr<LocalWorld> LocalWorld::subgroup_world(LocalChannel channel, uint64_t generation,
                                                       const std::vector<int>& ranks) {
  const std::pair<int, uint64_t> key{static_cast<int>(channel), generation};
  std::vector<int> failed_members;
  std::shared_ptr<LocalWorld> world;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    PendingSubgroup& pending = pending_subgroups_[key];
    if (!pending.world) {
      std::vector<int> hosts;
      for (size_t i = 0; i < ranks.size(); ++i) {
        hosts.push_back(host_of_rank_.at(static_cast<size_t>(ranks[i])));
        if (failed_[static_cast<size_t>(ranks[i])]) failed_members.push_back(static_cast<int>(i));
      }
      pending.world = std::make_shared<LocalWorld>(std::move(hosts), options_);
      pending.fetches_left = static_cast<int>(ranks.size());
      children_.push_back(Child{pending.world, ranks});
    }
    world = pending.world;
    if (--pending.fetches_left == 0) pending_subgroups_.erase(key);
  }
  for (int r : failed_members) world->fail_rank(r);
  return world;
}

}  // namespace runrun
