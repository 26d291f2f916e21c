#pragma once
// Why: the elastic driver must decide, whenever something changes, which workers run where.
// The hosts it knows (from -H once, or from every run of the discovery script) are kept in the
// order they first appeared, each with its slots, whether the last discovery still lists it, and
// its failures: a host where a worker failed gets no new worker until its cooldown ends, and the
// cooldown doubles with every failure within a range (Horovod's blacklist with cooldown).
// Workers already running on such a host keep running. The plan of who stops and who starts is a
// pure function of that table, so it is unit-tested without processes. Thread-safety: plain values;
// the driver's single loop owns them.

#include <chrono>
#include <string>
#include <vector>

#include "launcher/hosts/host_list.h"

namespace runrun::launcher {

using ElasticClock = std::chrono::steady_clock;

inline constexpr std::chrono::seconds kBlacklistBaseCooldown{10};
inline constexpr std::chrono::seconds kBlacklistMaxCooldown{600};

// --blacklist-cooldown-range MIN MAX (Horovod's flag): a host's first cooldown is MIN, each
// later one doubles, never above MAX. A failure while the host is cooling down (another worker
// of the same lost host) does not count again.
struct CooldownRange {
  std::chrono::seconds min = kBlacklistBaseCooldown;
  std::chrono::seconds max = kBlacklistMaxCooldown;
};

struct ElasticHost {
  std::string name;  // as the user or the script wrote it
  int slots = 0;
  bool listed = true;  // in the last discovery (always, with -H)
  int failures = 0;
  ElasticClock::time_point cooldown_until{};
};

class ElasticHostTable {
 public:
  explicit ElasticHostTable(CooldownRange cooldown = {}) : cooldown_(cooldown) {}
  // Takes a new list of available hosts (a discovery, or -H once). Hosts not in `hosts` are no
  // longer listed; new ones are appended. Returns true when a host or a slot count changed.
  bool update(const std::vector<HostSlots>& hosts);
  // A worker on host `index` failed at `now`: the host gets no new worker until its cooldown
  // ends (a failure during a cooldown leaves it as it is). Returns the time left of it.
  std::chrono::seconds record_failure(int index, ElasticClock::time_point now);
  // True when the host may be given new workers at `now`.
  bool accepts_new_workers(int index, ElasticClock::time_point now) const;
  // The earliest end of a cooldown after `now` of a listed host (max() when none).
  ElasticClock::time_point next_cooldown_end(ElasticClock::time_point now) const;

  const std::vector<ElasticHost>& hosts() const { return hosts_; }
  const ElasticHost& at(int index) const { return hosts_[static_cast<std::size_t>(index)]; }

 private:
  CooldownRange cooldown_;
  std::vector<ElasticHost> hosts_;
};

// A running worker, for planning: its id (increasing with start order) and host index.
struct PlannedWorker {
  int id = 0;
  int host = 0;
};

struct MembershipPlan {
  std::vector<int> stop;      // ids of running workers to stop (host gone, fewer slots)
  std::vector<int> start_on;  // a host index per new worker to start
};

// Who stops and who starts: workers on hosts no longer listed, or beyond their host's slots
// (newest first), stop; so do the workers of a host in its cooldown after a failure, as
// Horovod's blacklisted host leaves the job (unless `keep_failed_hosts`, --keep-failed-hosts);
// free slots of listed hosts out of cooldown get new workers, in host order, while the total
// stays within `max_np` (only when `allow_new`: with -H and no script, the job goes on with its
// survivors).
MembershipPlan plan_membership(const ElasticHostTable& table,
                               const std::vector<PlannedWorker>& running, int max_np,
                               bool allow_new, ElasticClock::time_point now,
                               bool keep_failed_hosts = false);

// The rank order of a generation: hosts ordered by their oldest worker, workers of a host
// together by id. Rank 0 is thus the oldest worker, one that holds the committed state when
// any survivor does (new workers get it from rank 0 through state.sync()).
std::vector<PlannedWorker> rank_order(std::vector<PlannedWorker> members);

}  // namespace runrun::launcher
