#include "launcher/cluster_hosts.h"

#include <algorithm>

#include "common/errors.h"
#include "common/slurm_lists.h"

namespace runrun::launcher {
namespace {

const std::string* find(const Environment& env, const char* name) {
  const auto it = env.find(name);
  return it == env.end() || it->second.empty() ? nullptr : &it->second;
}

std::string short_name(const std::string& host) { return host.substr(0, host.find('.')); }

}  // namespace

std::optional<ClusterHosts> slurm_allocation(const Environment& env) {
  const std::string* job = find(env, "SLURM_JOB_ID");
  if (job == nullptr) return std::nullopt;
  const bool job_list = find(env, "SLURM_JOB_NODELIST") != nullptr;
  const char* nodes_name = job_list || !find(env, "SLURM_NODELIST") ? "SLURM_JOB_NODELIST"
                                                                      : "SLURM_NODELIST";
  const std::string* nodes = find(env, nodes_name);
  const std::string* tasks = find(env, "SLURM_TASKS_PER_NODE");
  if (nodes == nullptr || tasks == nullptr) {
    throw InvalidArgumentError(RUNRUN_WHERE,
                               "SLURM_JOB_ID=" + *job + " says runrun runs in a Slurm allocation, "
                               "but " + std::string(nodes ? "SLURM_TASKS_PER_NODE" : nodes_name) +
                               " is not set: run runrun inside salloc or an sbatch script, or "
                               "give -np and -H");
  }
  const auto names = slurm::expand_host_list(*nodes, nodes_name);
  const auto counts = slurm::expand_counts(*tasks, "SLURM_TASKS_PER_NODE");
  if (names.size() != counts.size()) {
    throw InvalidArgumentError(RUNRUN_WHERE,
                               std::string(nodes_name) + "='" + *nodes + "' lists " +
                                   std::to_string(names.size()) + " nodes but "
                                   "SLURM_TASKS_PER_NODE='" + *tasks + "' gives counts for " +
                                   std::to_string(counts.size()));
  }
  ClusterHosts allocation;
  for (std::size_t i = 0; i < names.size(); ++i) allocation.hosts.push_back({names[i], counts[i]});
  allocation.source = "the Slurm allocation of job " + *job + " (" + nodes_name + "=" + *nodes +
                      ", SLURM_TASKS_PER_NODE=" + *tasks + ")";
  allocation.slurm = true;
  return allocation;
}

std::optional<ClusterHosts> mpi_operator_hosts(const Environment& env) {
  for (const char* name : {"OMPI_MCA_orte_default_hostfile", "OMPI_MCA_prte_default_hostfile"}) {
    const std::string* path = find(env, name);
    if (path == nullptr) continue;
    ClusterHosts hosts;
    try {
      hosts.hosts = read_hostfile(*path);
    } catch (const InvalidArgumentError& error) {
      throw InvalidArgumentError(RUNRUN_WHERE, std::string(name) + "=" + *path +
                                                   " (the MPI Operator's hostfile): " +
                                                   error.what());
    }
    hosts.source = "the hostfile " + *path + " that " + name + " names";
    return hosts;
  }
  return std::nullopt;
}

void check_hosts_in_allocation(const std::vector<HostSlots>& hosts, const std::string& given_by,
                               const ClusterHosts& allocation, const std::string& local_name) {
  for (const auto& host : hosts) {
    const std::string name = short_name(host.name == "localhost" ? local_name : host.name);
    const bool allocated =
        std::any_of(allocation.hosts.begin(), allocation.hosts.end(),
                    [&](const HostSlots& node) { return short_name(node.name) == name; });
    if (!allocated) {
      throw InvalidArgumentError(RUNRUN_WHERE,
                                 "host '" + host.name + "' of " + given_by + " is outside " +
                                     allocation.source + ": name allocated nodes only, or leave "
                                     "out -H to use the whole allocation");
    }
  }
}

}  // namespace runrun::launcher
