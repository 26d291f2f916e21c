// GlooBackend::create_subgroup: a backend over a subset of the ranks: its own data context
// under a sub-prefix of the parent's store prefix, connected by the members only (its control
// channel, if any, is split from the parent's channel: GlooControlChannel::create_subgroup).

#include <algorithm>
#include <string>

#include "common/errors.h"
#include "ops/base/backend_checks.h"
#include "ops/gloo/gloo_backend.h"

namespace runrun::gloo_backend {
std::unique_ptr<Backend> GlooBackend::create_subgroup(const std::vector<int>& ranks) {
  const char* name = "create_subgroup";
  backend_checks::check_subgroup_ranks(*this, ranks);
  guard_->check_usable(name);
  // Every rank must pass the same list: the minimum of (h, ~h) equals (h, ~h) on every rank only
  // when all hashes agree. The subgroup's number (its store prefix) is agreed the same way.
  const uint64_t hash = backend_checks::ranks_fingerprint(ranks);
  const uint64_t number = subgroups_created_++;
  std::vector<uint64_t> agreed{hash, ~hash, number, ~number};
  allreduce_min(*data_, *guard_, name, agreed);
  if (agreed[0] != hash || agreed[1] != ~hash || agreed[2] != number || agreed[3] != ~number) {
    throw MismatchError(RUNRUN_WHERE, "create_subgroup on rank " + std::to_string(rank()) +
                                          ": ranks passed different member lists (this rank: " +
                                          backend_checks::to_string({ranks.begin(), ranks.end()}) +
                                          "); every rank must pass the same sorted list");
  }
  const auto me = std::lower_bound(ranks.begin(), ranks.end(), rank());
  if (me == ranks.end() || *me != rank()) return nullptr;
  std::vector<std::string> hosts;
  for (int r : ranks) hosts.push_back(hosts_[static_cast<size_t>(r)]);
  return std::unique_ptr<Backend>(new GlooBackend(
      store_, prefix_ + "/set" + std::to_string(number), static_cast<int>(me - ranks.begin()),
      static_cast<int>(ranks.size()), device_, options_, std::move(hosts)));
}

}  // namespace runrun::gloo_backend
