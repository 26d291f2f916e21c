#include "launcher/elastic/elastic_hosts.h"

#include <algorithm>
#include <map>

namespace runrun::launcher {

bool ElasticHostTable::update(const std::vector<HostSlots>& hosts) {
  bool changed = false;
  std::vector<bool> seen(hosts_.size(), false);
  for (const auto& host : hosts) {
    auto it = std::find_if(hosts_.begin(), hosts_.end(),
                           [&](const ElasticHost& known) { return known.name == host.name; });
    if (it == hosts_.end()) {
      hosts_.push_back({host.name, host.slots, true, 0, {}});
      seen.push_back(true);
      changed = true;
      continue;
    }
    seen[static_cast<std::size_t>(it - hosts_.begin())] = true;
    changed |= !it->listed || it->slots != host.slots;
    it->listed = true;
    it->slots = host.slots;
  }
  for (std::size_t i = 0; i < hosts_.size(); ++i) {
    if (!seen[i] && hosts_[i].listed) {
      hosts_[i].listed = false;
      changed = true;
    }
  }
  return changed;
}

std::chrono::seconds ElasticHostTable::record_failure(int index, ElasticClock::time_point now) {
  ElasticHost& host = hosts_[static_cast<std::size_t>(index)];
  if (now < host.cooldown_until) {
    return std::chrono::ceil<std::chrono::seconds>(host.cooldown_until - now);
  }
  ++host.failures;
  auto cooldown = cooldown_.min;
  for (int i = 1; i < host.failures && cooldown < cooldown_.max; ++i) cooldown *= 2;
  cooldown = std::min(cooldown, cooldown_.max);
  host.cooldown_until = now + cooldown;
  return cooldown;
}

bool ElasticHostTable::accepts_new_workers(int index, ElasticClock::time_point now) const {
  const ElasticHost& host = at(index);
  return host.listed && now >= host.cooldown_until;
}

ElasticClock::time_point ElasticHostTable::next_cooldown_end(ElasticClock::time_point now) const {
  auto next = ElasticClock::time_point::max();
  for (const auto& host : hosts_) {
    if (host.listed && host.cooldown_until > now) next = std::min(next, host.cooldown_until);
  }
  return next;
}

MembershipPlan plan_membership(const ElasticHostTable& table,
                               const std::vector<PlannedWorker>& running, int max_np,
                               bool allow_new, ElasticClock::time_point now,
                               bool keep_failed_hosts) {
  MembershipPlan plan;
  std::map<int, std::vector<int>> by_host;  // host -> ids, oldest first
  for (const auto& worker : running) by_host[worker.host].push_back(worker.id);
  int kept = 0;
  for (auto& [host, ids] : by_host) {
    std::sort(ids.begin(), ids.end());
    const ElasticHost& known = table.at(host);
    const bool usable = keep_failed_hosts ? known.listed : table.accepts_new_workers(host, now);
    const int allowed = usable ? known.slots : 0;
    for (std::size_t i = 0; i < ids.size(); ++i) {
      if (static_cast<int>(i) < allowed) {
        ++kept;
      } else {
        plan.stop.push_back(ids[i]);
      }
    }
  }
  if (kept > max_np) {  // newest first
    std::vector<int> ids;
    for (const auto& worker : running) {
      if (std::find(plan.stop.begin(), plan.stop.end(), worker.id) == plan.stop.end()) {
        ids.push_back(worker.id);
      }
    }
    std::sort(ids.rbegin(), ids.rend());
    for (int i = 0; i < kept - max_np; ++i) plan.stop.push_back(ids[static_cast<std::size_t>(i)]);
    kept = max_np;
  }
  if (!allow_new) return plan;
  for (int host = 0; host < static_cast<int>(table.hosts().size()) && kept < max_np; ++host) {
    if (!table.accepts_new_workers(host, now)) continue;
    const auto found = by_host.find(host);
    const int used = found == by_host.end() ? 0 : static_cast<int>(found->second.size());
    for (int slot = used; slot < table.at(host).slots && kept < max_np; ++slot) {
      plan.start_on.push_back(host);
      ++kept;
    }
  }
  return plan;
}

std::vector<PlannedWorker> rank_order(std::vector<PlannedWorker> members) {
  std::map<int, int> oldest;  // host -> its smallest worker id
  for (const auto& worker : members) {
    auto [it, inserted] = oldest.emplace(worker.host, worker.id);
    if (!inserted) it->second = std::min(it->second, worker.id);
  }
  std::sort(members.begin(), members.end(), [&](const PlannedWorker& a, const PlannedWorker& b) {
    const int ha = oldest[a.host], hb = oldest[b.host];
    return ha != hb ? ha < hb : a.id < b.id;
  });
  return members;
}

}  // namespace runrun::launcher
