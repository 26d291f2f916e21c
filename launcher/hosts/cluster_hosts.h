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

#include "launcher/remote/environment.h"
#include "launcher/hosts/host_list.h"

namespace runrun::launcher {

struct ClusterHosts {
  std::vector<HostSlots> hosts;
  // For the one line the launcher prints and for messages ("-np 9 is more than the 8 slots of
  // ..."): where the hosts came from and what was read.
  std::string source;
  // A Slurm allocation: ranks start through srun (compute nodes often have no ssh).
  bool slurm = false;
  // -np when none is given: every slot, or SLURM_NTASKS where the allocation asked for fewer
  // tasks than it has slots (salloc -N 2 without -n gives one slot per CPU).
  int default_np = 0;
  // The launcher itself runs inside an srun step (SLURM_STEP_ID below Slurm's special ids):
  // its srun must share that step's resources (--overlap) or it waits for them for ever.
  bool inside_step = false;
};

// The allocation this process runs in (SLURM_JOB_ID with SLURM_NODELIST, else
// SLURM_JOB_NODELIST, and SLURM_TASKS_PER_NODE: inside an srun step the first and the last are
// the step's, as Open MPI reads them), or nothing outside one. Throws InvalidArgumentError
// naming the variable when a list is malformed or the counts do not match the nodes, unless
// `hosts_given` (-H or --hostfile: the job does not need the allocation's lists; then nothing).
std::optional<ClusterHosts> slurm_allocation(const Environment& env, bool hosts_given = false);

// The MPI Operator's hostfile (OMPI_MCA_orte_default_hostfile, else
// OMPI_MCA_prte_default_hostfile), or nothing when neither is set. Throws InvalidArgumentError
// naming the variable and the file when it cannot be read.
std::optional<ClusterHosts> mpi_operator_hosts(const Environment& env);

// `hosts` (-H/--hostfile) as the allocation names them, so srun can place ranks there. Refuses
// a host outside the allocation, or with more slots than it has there, naming both. Names
// compare as Slurm writes them (short names); "localhost" is this host's name `local_name`.
std::vector<HostSlots> hosts_in_allocation(const std::vector<HostSlots>& hosts,
                                           const std::string& given_by,
                                           const ClusterHosts& allocation,
                                           const std::string& local_name);

// The launcher's one line about hosts it took from the cluster: "N processes on a:2,b:2, from
// SOURCE[, started through srun]".
std::string cluster_hosts_notice(const ClusterHosts& cluster, int num_proc);

}  // namespace runrun::launcher
