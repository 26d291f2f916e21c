#pragma once
// Why: a rank can be started by runrun's launcher, by mpirun, by Slurm's `srun` (with or without
// an MPI plugin), or by torchrun and the operators that follow its convention (Kubeflow's
// PyTorchJob, Trainer v2's PET_* variables). Each leaves different variables behind. This reads
// them, in one documented order, into one plan: how many ranks, which one this is, which
// backend `auto` means, and for the launches that have no runrun launcher ("direct" launches:
// a Slurm step, torchrun) where rank 0 serves the job's rendezvous and how the ranks recognise
// each other there. A plan that says "several ranks" never degrades to a world of one: variables
// that say so but cannot form a job are an error naming them. docs/clusters.md.
// Thread-safety: detect_launch is a pure function of the map it is given.

#include <cstdint>
#include <map>
#include <string>

#include "rendezvous/job_secret.h"

namespace runrun::rendezvous {

using EnvironmentMap = std::map<std::string, std::string>;

enum class LaunchKind {
  kSingle,          // nothing says there are other ranks: a job of one
  kRunrunLauncher,  // runrun's launcher (its rank shim set RUNRUN_CONTROLLER)
  kMpirun,          // Open MPI's mpirun (OMPI_COMM_WORLD_SIZE)
  kSlurmMpi,        // srun with an MPI plugin (--mpi=pmix/pmi2): MPI_Init forms the job
  kSlurmStep,       // srun without one: runrun forms the job over Gloo (direct)
  kTorchrun,        // WORLD_SIZE/RANK/MASTER_ADDR/MASTER_PORT (or PET_*): over Gloo (direct)
};

struct LaunchPlan {
  LaunchKind kind = LaunchKind::kSingle;
  // One line for the log: which environment was recognised and what was read from it.
  std::string description;
  // What RUNRUN_BACKEND=auto means in this process: "mpi" or "gloo".
  std::string backend = "mpi";
  // Direct launches only (kSlurmStep, kTorchrun): this rank's place, and the rendezvous.
  int rank = 0;
  int size = 1;
  std::string host_id;           // ranks with equal ids share a host; empty: the host's name
  std::string rendezvous_host;   // where rank 0 serves (the step's first node, MASTER_ADDR)
  uint16_t rendezvous_port = 0;  // derived from the job's identity, or RUNRUN_RENDEZVOUS_PORT
  // Names this job among others on the same hosts (Slurm job and step id; torchrun's master
  // address, port and run id): ranks of another job are refused by the rendezvous.
  std::string job_identity;
  bool user_secret = false;     // RUNRUN_RENDEZVOUS_SECRET was set: the rendezvous authenticates
  bool port_from_user = false;  // RUNRUN_RENDEZVOUS_PORT: the same port for every init()
  uint16_t reserved_port = 0;   // never derived: torch's store (MASTER_PORT)
  // Whether the ranks may span hosts (a Slurm step over several nodes; torchrun unless
  // LOCAL_WORLD_SIZE equals WORLD_SIZE): rank 0 then never serves on loopback alone.
  bool several_hosts = true;
};

// A launch that runrun forms itself over Gloo, rank 0 serving the rendezvous.
inline bool is_direct(LaunchKind kind) {
  return kind == LaunchKind::kSlurmStep || kind == LaunchKind::kTorchrun;
}

// The plan for a process with environment `env`. Order: runrun's launcher, mpirun, the torchrun
// convention (torchrun started under srun is torchrun's), a Slurm step, else a job of one.
// Throws InvalidArgumentError naming the variables read when they say "several ranks" and are
// incomplete or malformed.
LaunchPlan detect_launch(const EnvironmentMap& env);

// detect_launch of this process's environment.
LaunchPlan detect_launch_of_this_process();

// The plan of a process's `initialization`-th init() (0, 1, ...: a script may shut runrun down
// and initialize it again, on every rank alike): each one is a job of its own, with its own
// identity, secret and (unless RUNRUN_RENDEZVOUS_PORT is set) port, so a rank that re-inits
// early never talks to rank 0's previous rendezvous.
LaunchPlan for_initialization(LaunchPlan plan, int initialization);

// The rendezvous port of a direct launch when RUNRUN_RENDEZVOUS_PORT is not set: a hash of the
// job's identity into 20000-31999 (below Linux's ephemeral ports), never `avoid` (torch's store).
uint16_t derived_port(const std::string& job_identity, uint16_t avoid);

// The secret a direct launch's ranks prove to rank 0's rendezvous: derived from the job's
// identity and, when the user set one (RUNRUN_RENDEZVOUS_SECRET), that secret. Without the
// user's secret it separates jobs but authenticates nothing (the identity is not secret).
JobSecret direct_launch_secret(const LaunchPlan& plan, const JobSecret& user_secret);

}  // namespace runrun::rendezvous
