#pragma once
// Why: on a cluster the hosts usually come from whoever handed the machines out, not from -H.
// Inside a Slurm allocation (salloc, sbatch) they are SLURM_JOB_NODELIST with
// SLURM_TASKS_PER_NODE; in a Kubeflow MPI Operator launcher pod they are the hostfile that
// OMPI_MCA_orte_default_hostfile (or _prte_) names, as mpirun would read it. The launcher takes
// them from here when neither -H nor --hostfile is given, and checks -H against an allocation.
// docs/clusters.md.
// Thread-safety: pure functions over the environment they are given (read_hostfile reads a
// file).

#include <optional>
#include <string>
#include <vector>

#include "launcher/environment.h"
#include "launcher/host_list.h"

namespace runrun::launcher {

struct ClusterHosts {
  std::vector<HostSlots> hosts;
  // For the one line the launcher prints and for messages ("-np 9 is more than the 8 slots of
  // ..."): where the hosts came from and what was read.
  std::string source;
  // A Slurm allocation: ranks start through srun (compute nodes often have no ssh).
  bool slurm = false;
};

// The allocation this process runs in (SLURM_JOB_ID with SLURM_JOB_NODELIST, or
// SLURM_NODELIST, and SLURM_TASKS_PER_NODE), or nothing outside one. Throws
// InvalidArgumentError naming the variable when a list is malformed or the counts do not match
// the nodes.
std::optional<ClusterHosts> slurm_allocation(const Environment& env);

// The MPI Operator's hostfile (OMPI_MCA_orte_default_hostfile, else
// OMPI_MCA_prte_default_hostfile), or nothing when neither is set. Throws InvalidArgumentError
// naming the variable and the file when it cannot be read.
std::optional<ClusterHosts> mpi_operator_hosts(const Environment& env);

// Refuses -H/--hostfile hosts outside the allocation, naming both. Host names compare as Slurm
// writes them (short names); "localhost" counts as this host's name `local_name`.
void check_hosts_in_allocation(const std::vector<HostSlots>& hosts, const std::string& given_by,
                               const ClusterHosts& allocation, const std::string& local_name);

}  // namespace runrun::launcher
