#include <cstdio>

#include "common/errors.h"
#include "launcher/elastic/elastic_driver_state.h"

namespace runrun::launcher {
namespace {

using Clock = ElasticClock;

// A job whose rendezvous server listens on loopback (it started on this host alone, and this
// host has no route to name: launcher_main.cc) cannot take remote hosts: they are left out,
// said once per host.
std::vector<HostSlots> reachable(ElasticDriver& driver, const std::vector<HostSlots>& found) {
  if (!driver.settings.loopback_only) return found;
  std::vector<HostSlots> kept;
  for (const auto& host : found) {
    if (driver.settings.local.is_local(host.name)) {
      kept.push_back(host);
    } else if (driver.refused_hosts.insert(host.name).second) {
      std::fprintf(stderr,
                   "runrun: elastic: host %s cannot join: this job listens on loopback "
                   "(it started on this host alone and no --network-interface was "
                   "given); restart it with --network-interface naming the network "
                   "remote hosts reach this host on\n",
                   host.name.c_str());
    }
  }
  return kept;
}

void take_hosts(ElasticDriver& driver, const std::vector<HostSlots>& found, Clock::time_point now) {
  driver.hosts.update(reachable(driver, found));
  // A change of membership (a host gone or new, more or fewer slots, a cooldown that ended)
  // makes a new generation; a change that moves no worker does not.
  const auto plan = plan_membership(driver.hosts, planned_running(driver), driver.elastic.max_np,
                                    true, now, driver.elastic.keep_failed_hosts);
  if (!plan.stop.empty() || !plan.start_on.empty()) {
    if (driver.settings.options.verbose) {
      std::fprintf(stderr,
                   "runrun: elastic: the hosts changed: %zu worker(s) to stop, %zu to "
                   "start\n",
                   plan.stop.size(), plan.start_on.size());
    }
    driver.schedule_change(now);
  }
}

}  // namespace

void step_discovery(ElasticDriver& driver, Clock::time_point now) {
  if (!driver.has_discovery() || driver.finishing) return;
  if (!driver.discovery) {
    if (now < driver.next_discovery) return;
    try {
      driver.discovery = std::make_unique<DiscoveryRun>(
          driver.elastic.discovery_script, kDiscoveryTimeout, driver.elastic.default_slots);
    } catch (const Error& error) {
      std::fprintf(stderr, "runrun: elastic: %s (keeping the hosts found before)\n", error.what());
      driver.next_discovery = now + kDiscoveryInterval;
    }
    return;
  }
  if (!driver.discovery->done(now)) return;
  const auto run = std::move(driver.discovery);
  driver.next_discovery = now + kDiscoveryInterval;
  if (!run->hosts()) {
    std::fprintf(stderr, "runrun: elastic: %s (keeping the hosts found before)\n",
                 run->error().c_str());
    return;
  }
  take_hosts(driver, *run->hosts(), now);
}

}  // namespace runrun::launcher
