#include "launcher/hosts/cluster_hosts.h"

#include <algorithm>
#include <charconv>

#include "common/errors.h"
#include "common/slurm_lists.h"

namespace runrun::launcher {
namespace {

const std::string* find(const Environment& env, const char* name) {
  const auto it = env.find(name);
  return it == env.end() || it->second.empty() ? nullptr : &it->second;
}

std::string short_name(const std::string& host) { return host.substr(0, host.find('.')); }

bool parse_whole(const std::string& text, long& out) {
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && end == text.data() + text.size();
}

// The allocation's variables, read; see slurm_allocation.
std::optional<ClusterHosts> read_allocation(const Environment& env) {
  const std::string* job = find(env, "SLURM_JOB_ID");
  if (job == nullptr) return std::nullopt;
  const bool step_list = find(env, "SLURM_NODELIST") != nullptr;
  const char* nodes_name = step_list ? "SLURM_NODELIST" : "SLURM_JOB_NODELIST";
  const std::string* nodes = find(env, nodes_name);
  const std::string* tasks = find(env, "SLURM_TASKS_PER_NODE");
  if (nodes == nullptr || tasks == nullptr) {
    throw InvalidArgumentError(RUNRUN_WHERE,
                               "SLURM_JOB_ID=" + *job +
                                   " says runrun runs in a Slurm allocation, "
                                   "but " +
                                   std::string(nodes ? "SLURM_TASKS_PER_NODE" : nodes_name) +
                                   " is not set: run runrun inside salloc or an sbatch script, or "
                                   "give -np and -H");
  }
  const auto names = slurm::expand_host_list(*nodes, nodes_name);
  const auto counts = slurm::expand_counts(*tasks, "SLURM_TASKS_PER_NODE");
  if (names.size() != counts.size()) {
    throw InvalidArgumentError(RUNRUN_WHERE, std::string(nodes_name) + "='" + *nodes + "' lists " +
                                                 std::to_string(names.size()) +
                                                 " nodes but "
                                                 "SLURM_TASKS_PER_NODE='" +
                                                 *tasks + "' gives counts for " +
                                                 std::to_string(counts.size()));
  }
  ClusterHosts allocation;
  for (std::size_t i = 0; i < names.size(); ++i) allocation.hosts.push_back({names[i], counts[i]});
  allocation.source = "the Slurm allocation of job " + *job + " (" + nodes_name + "=" + *nodes +
                      ", SLURM_TASKS_PER_NODE=" + *tasks + ")";
  allocation.slurm = true;
  allocation.default_np = total_slots(allocation.hosts);
  long ntasks = 0;
  if (const std::string* text = find(env, "SLURM_NTASKS");
      text != nullptr && parse_whole(*text, ntasks) && ntasks >= 1 &&
      ntasks < allocation.default_np) {
    allocation.default_np = static_cast<int>(ntasks);
  }
  long step = 0;
  const std::string* step_text = find(env, "SLURM_STEP_ID");
  allocation.inside_step =
      step_text != nullptr && parse_whole(*step_text, step) && step >= 0 && step < 0xfffffff0L;
  return allocation;
}

}  // namespace

std::optional<ClusterHosts> slurm_allocation(const Environment& env, bool hosts_given) {
  try {
    return read_allocation(env);
  } catch (const InvalidArgumentError&) {
    if (!hosts_given) throw;
    return std::nullopt;
  }
}

std::optional<ClusterHosts> mpi_operator_hosts(const Environment& env) {
  for (const char* name : {"OMPI_MCA_orte_default_hostfile", "OMPI_MCA_prte_default_hostfile"}) {
    const std::string* path = find(env, name);
    if (path == nullptr) continue;
    ClusterHosts hosts;
    try {
      hosts.hosts = read_hostfile(*path);
    } catch (const InvalidArgumentError& error) {
      throw InvalidArgumentError(
          RUNRUN_WHERE,
          std::string(name) + "=" + *path + " (the MPI Operator's hostfile): " + error.what());
    }
    hosts.source = "the hostfile " + *path + " that " + name + " names";
    return hosts;
  }
  return std::nullopt;
}

std::vector<HostSlots> hosts_in_allocation(const std::vector<HostSlots>& hosts,
                                           const std::string& given_by,
                                           const ClusterHosts& allocation,
                                           const std::string& local_name) {
  std::vector<HostSlots> named;
  for (const auto& host : hosts) {
    const std::string name = short_name(host.name == "localhost" ? local_name : host.name);
    const auto node = std::find_if(
        allocation.hosts.begin(), allocation.hosts.end(),
        [&](const HostSlots& allocated) { return short_name(allocated.name) == name; });
    if (node == allocation.hosts.end()) {
      throw InvalidArgumentError(RUNRUN_WHERE, "host '" + host.name + "' of " + given_by +
                                                   " is outside " + allocation.source +
                                                   ": name allocated nodes only, or leave "
                                                   "out -H to use the whole allocation");
    }
    if (host.slots > node->slots) {
      throw InvalidArgumentError(RUNRUN_WHERE, "host '" + host.name + "' of " + given_by + " has " +
                                                   std::to_string(host.slots) +
                                                   " slots, more than the " +
                                                   std::to_string(node->slots) + " of node " +
                                                   node->name + " in " + allocation.source);
    }
    named.push_back({node->name, host.slots});
  }
  return named;
}

std::string cluster_hosts_notice(const ClusterHosts& cluster, int num_proc) {
  return std::to_string(num_proc) + " processes on " +
         format_host_list(hosts_for_processes(cluster.hosts, num_proc)) + ", from " +
         cluster.source + (cluster.slurm ? ", started through srun" : "");
}

}  // namespace runrun::launcher
