#include "rendezvous/launch_environment.h"

#include <charconv>
#include <unistd.h>

#include <string_view>
#include <vector>

#include "common/env_names.h"
#include "common/errors.h"
#include "common/slurm_lists.h"

extern char** environ;

namespace runrun::rendezvous {
namespace {

// The variables each convention uses, for messages ("runrun read ...").
constexpr const char* kTorchrunVariables =
    "WORLD_SIZE, RANK, LOCAL_RANK, LOCAL_WORLD_SIZE, GROUP_RANK, MASTER_ADDR, MASTER_PORT";
constexpr const char* kPetVariables =
    "PET_NNODES, PET_NPROC_PER_NODE, PET_NODE_RANK, PET_MASTER_ADDR, PET_MASTER_PORT";
constexpr const char* kSlurmVariables =
    "SLURM_JOB_ID, SLURM_STEP_ID, SLURM_PROCID, SLURM_STEP_NUM_TASKS, SLURM_LOCALID, "
    "SLURM_NODEID, SLURM_STEP_NODELIST, SLURM_STEP_TASKS_PER_NODE";

// Slurm's step ids from SLURM_MAX_NORMAL_STEP_ID (0xfffffff0) up name the batch script, the
// extern and interactive steps and the like (their values changed between Slurm releases):
// none is an srun step.
constexpr unsigned long kMaxNormalStepId = 0xfffffff0UL;

const std::string* find(const EnvironmentMap& env, const char* name) {
  const auto it = env.find(name);
  return it == env.end() || it->second.empty() ? nullptr : &it->second;
}

std::string value_or(const EnvironmentMap& env, const char* name, const std::string& fallback) {
  const std::string* value = find(env, name);
  return value ? *value : fallback;
}

// The first of `names` that is set, or null.
const std::string* first_of(const EnvironmentMap& env, std::initializer_list<const char*> names,
                            const char** which = nullptr) {
  for (const char* name : names) {
    if (const std::string* value = find(env, name)) {
      if (which) *which = name;
      return value;
    }
  }
  return nullptr;
}

bool parse_int(const std::string& text, long& out) {
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && end == text.data() + text.size();
}

// A variable that must hold a whole number in [low, high]; `context` ends the message.
int int_of(const EnvironmentMap& env, const char* name, long low, long high,
           const std::string& context) {
  const std::string* text = find(env, name);
  RUNRUN_ENFORCE(text != nullptr, InvalidArgumentError,
                 std::string(name) + " is not set" + context);
  long value = 0;
  RUNRUN_ENFORCE(parse_int(*text, value) && value >= low && value <= high, InvalidArgumentError,
                 std::string(name) + "='" + *text + "' is not a whole number in " +
                     std::to_string(low) + "-" + std::to_string(high) + context);
  return static_cast<int>(value);
}

uint16_t port_of(const EnvironmentMap& env, const char* name, const std::string& context) {
  return static_cast<uint16_t>(int_of(env, name, 1, 65535, context));
}

// RUNRUN_RENDEZVOUS_ADDR/PORT and the secret, which override what a direct launch derives.
void apply_user_overrides(const EnvironmentMap& env, LaunchPlan& plan, uint16_t avoid_port,
                          const std::string& context) {
  if (const std::string* host = find(env, env::kRendezvousAddr)) plan.rendezvous_host = *host;
  plan.port_from_user = find(env, env::kRendezvousPort) != nullptr;
  plan.reserved_port = avoid_port;
  plan.rendezvous_port = plan.port_from_user ? port_of(env, env::kRendezvousPort, context)
                                             : derived_port(plan.job_identity, avoid_port);
  plan.user_secret = find(env, env::kRendezvousSecret) != nullptr;
  plan.backend = "gloo";
  plan.description += ", rank 0 serving the rendezvous at " + plan.rendezvous_host + ":" +
                      std::to_string(plan.rendezvous_port) +
                      (plan.user_secret ? " (authenticated by RUNRUN_RENDEZVOUS_SECRET)"
                                        : " (not authenticated: no RUNRUN_RENDEZVOUS_SECRET)");
}

// torchrun, Kubeflow's PyTorchJob and similar launchers: WORLD_SIZE > 1 with RANK, MASTER_ADDR,
// MASTER_PORT (LOCAL_RANK/LOCAL_WORLD_SIZE/GROUP_RANK where torchrun sets them).
LaunchPlan torchrun_plan(const EnvironmentMap& env) {
  const std::string context =
      std::string(
          ": WORLD_SIZE says this process is one of several ranks (the torchrun / "
          "PyTorchJob convention), and runrun reads ") +
      kTorchrunVariables +
      " to form that job; set them all, or unset WORLD_SIZE to run a job of one";
  LaunchPlan plan;
  plan.size = int_of(env, "WORLD_SIZE", 1, 1 << 24, context);
  if (plan.size == 1) {
    plan.description = "the torchrun convention with WORLD_SIZE=1: a job of one";
    return plan;
  }
  plan.kind = LaunchKind::kTorchrun;
  plan.rank = int_of(env, "RANK", 0, plan.size - 1, context);
  // PyTorchJob with nprocPerNode > 1 counts every process in WORLD_SIZE but starts one per pod
  // (RANK is the pod's index) unless torchrun runs in it (and sets LOCAL_RANK).
  long per_node = 0;
  const std::string nproc = value_or(env, "PET_NPROC_PER_NODE", "1");
  RUNRUN_ENFORCE(find(env, "LOCAL_RANK") || !parse_int(nproc, per_node) || per_node <= 1,
                 InvalidArgumentError,
                 "PET_NPROC_PER_NODE=" + nproc +
                     " counts several processes per pod in "
                     "WORLD_SIZE, but this one was not started by torchrun (LOCAL_RANK is not set) "
                     "and nobody starts the others: run the script under torchrun, or set "
                     "nprocPerNode to 1" +
                     context);
  const std::string* master = find(env, "MASTER_ADDR");
  RUNRUN_ENFORCE(master != nullptr, InvalidArgumentError, "MASTER_ADDR is not set" + context);
  const uint16_t master_port = port_of(env, "MASTER_PORT", context);
  if (find(env, "GROUP_RANK")) {
    plan.host_id = "node " + std::to_string(int_of(env, "GROUP_RANK", 0, 1 << 24, context));
  }
  plan.rendezvous_host = *master;
  // Not TORCHELASTIC_RESTART_COUNT: after a membership change the agents' counts differ.
  plan.job_identity = "torchrun|" + *master + "|" + std::to_string(master_port) + "|" +
                      value_or(env, "TORCHELASTIC_RUN_ID", "") + "|" + std::to_string(plan.size);
  if (find(env, "LOCAL_WORLD_SIZE")) {
    plan.several_hosts = int_of(env, "LOCAL_WORLD_SIZE", 1, plan.size, context) != plan.size;
  }
  plan.description = "the torchrun convention: WORLD_SIZE=" + std::to_string(plan.size) +
                     " RANK=" + std::to_string(plan.rank) +
                     " LOCAL_RANK=" + value_or(env, "LOCAL_RANK", "(unset)") +
                     " MASTER_ADDR=" + *master + " MASTER_PORT=" + std::to_string(master_port);
  apply_user_overrides(env, plan, master_port, context);
  return plan;
}

// Kubeflow Trainer v2 sets PET_* for torchrun to read; a pod that runs the script itself (one
// process per node) reads them here.
LaunchPlan pet_plan(const EnvironmentMap& env) {
  const std::string context = std::string(
                                  ": PET_NNODES says this pod is one of several nodes "
                                  "(Kubeflow Trainer), and runrun reads ") +
                              kPetVariables + " to form that job";
  const int nodes = int_of(env, "PET_NNODES", 1, 1 << 24, context);
  const std::string nproc = value_or(env, "PET_NPROC_PER_NODE", "1");
  RUNRUN_ENFORCE(
      nproc == "1", InvalidArgumentError,
      "PET_NPROC_PER_NODE='" + nproc +
          "' asks for several processes per node, which "
          "nobody started: run the script under torchrun (it reads PET_* and starts them)" +
          context);
  LaunchPlan plan;
  plan.size = nodes;
  if (nodes == 1) {
    plan.description = "Kubeflow Trainer's PET_NNODES=1: a job of one";
    return plan;
  }
  plan.kind = LaunchKind::kTorchrun;
  plan.rank = int_of(env, "PET_NODE_RANK", 0, nodes - 1, context);
  const std::string* master = find(env, "PET_MASTER_ADDR");
  RUNRUN_ENFORCE(master != nullptr, InvalidArgumentError, "PET_MASTER_ADDR is not set" + context);
  const uint16_t master_port = port_of(env, "PET_MASTER_PORT", context);
  plan.host_id = "node " + std::to_string(plan.rank);
  plan.rendezvous_host = *master;
  plan.job_identity =
      "pet|" + *master + "|" + std::to_string(master_port) + "|" + std::to_string(nodes);
  plan.description = "Kubeflow Trainer's PET_* variables: PET_NNODES=" + std::to_string(nodes) +
                     " PET_NODE_RANK=" + std::to_string(plan.rank) + " PET_MASTER_ADDR=" + *master +
                     " PET_MASTER_PORT=" + std::to_string(master_port);
  apply_user_overrides(env, plan, master_port, context);
  return plan;
}

// A task srun started: srun alone sets the step's task count (a batch script and salloc's
// command have the job's variables, and SLURM_PROCID in a batch script, but no step's).
bool slurm_step(const EnvironmentMap& env) {
  const std::string* step = first_of(env, {"SLURM_STEP_ID", "SLURM_STEPID"});
  long id = 0;
  return find(env, "SLURM_JOB_ID") && find(env, "SLURM_PROCID") &&
         find(env, "SLURM_STEP_NUM_TASKS") && step != nullptr && parse_int(*step, id) && id >= 0 &&
         static_cast<unsigned long>(id) < kMaxNormalStepId;
}

// srun with an MPI plugin: Open MPI's MPI_Init forms the job through PMIx/PMI, whose servers
// srun started only then (SLURM_MPI_TYPE alone is also an srun input and may be stale).
bool slurm_mpi(const EnvironmentMap& env) {
  return find(env, "PMIX_RANK") != nullptr || find(env, "PMI_RANK") != nullptr;
}

LaunchPlan slurm_plan(const EnvironmentMap& env) {
  const std::string context = std::string(
                                  ": this process was started by Slurm's srun, and "
                                  "runrun reads ") +
                              kSlurmVariables + " to form the step's job";
  const char* size_name = "SLURM_STEP_NUM_TASKS";
  LaunchPlan plan;
  plan.size = int_of(env, size_name, 1, 1 << 24, context);
  plan.rank = int_of(env, "SLURM_PROCID", 0, plan.size - 1, context);
  const std::string job = value_or(env, "SLURM_JOB_ID", "");
  const std::string step = value_or(env, "SLURM_STEP_ID", value_or(env, "SLURM_STEPID", ""));
  if (slurm_mpi(env)) {
    plan.kind = LaunchKind::kSlurmMpi;
    plan.description =
        "a Slurm step with an MPI plugin (SLURM_MPI_TYPE=" + value_or(env, "SLURM_MPI_TYPE", "?") +
        ", " + (find(env, "PMIX_RANK") ? "PMIX_RANK" : "PMI_RANK") + "): job " + job + "." + step +
        ", MPI forms the job of " + std::to_string(plan.size);
    return plan;
  }
  if (plan.size == 1) {
    plan.description = "a Slurm step of one task (job " + job + "." + step + "): a job of one";
    return plan;
  }
  plan.kind = LaunchKind::kSlurmStep;
  const int node = int_of(env, "SLURM_NODEID", 0, 1 << 24, context);
  plan.host_id = "node " + std::to_string(node);
  const char* nodes_name = "SLURM_STEP_NODELIST";
  const std::string* nodes = find(env, nodes_name);
  RUNRUN_ENFORCE(nodes != nullptr, InvalidArgumentError,
                 "SLURM_STEP_NODELIST is not set" + context);
  const auto hosts = slurm::expand_host_list(*nodes, nodes_name);
  plan.several_hosts = hosts.size() > 1;
  const bool address_given = find(env, env::kRendezvousAddr) != nullptr;
  RUNRUN_ENFORCE(plan.rank != 0 || node == 0 || address_given, InvalidArgumentError,
                 "rank 0 (SLURM_PROCID=0) runs on node " + std::to_string(node) + " of " + *nodes +
                     ", not on the step's first node where the others look for it: "
                     "use a block or cyclic distribution (srun's default), or set "
                     "RUNRUN_RENDEZVOUS_ADDR to rank 0's host");
  plan.rendezvous_host = hosts.front();
  plan.job_identity = "slurm|" + value_or(env, "SLURM_CLUSTER_NAME", "") + "|" + job + "|" + step;
  plan.description = "a Slurm step without an MPI plugin: job " + job + "." + step + ", " +
                     size_name + "=" + std::to_string(plan.size) +
                     " SLURM_PROCID=" + std::to_string(plan.rank) +
                     " SLURM_LOCALID=" + value_or(env, "SLURM_LOCALID", "?") +
                     " SLURM_NODEID=" + std::to_string(node) + " " + nodes_name + "=" + *nodes;
  apply_user_overrides(env, plan, 0, context);
  return plan;
}

}  // namespace

uint16_t derived_port(const std::string& job_identity, uint16_t avoid) {
  uint64_t hash = 1469598103934665603ULL;  // FNV-1a
  for (unsigned char c : job_identity) {
    hash ^= c;
    hash *= 1099511628211ULL;
  }
  auto port = static_cast<uint16_t>(20000 + hash % 12000);
  if (port == avoid) port = static_cast<uint16_t>(port == 31999 ? 20000 : port + 1);
  return port;
}

LaunchPlan for_initialization(LaunchPlan plan, int initialization) {
  if (initialization == 0 || !is_direct(plan.kind)) return plan;
  plan.job_identity += "|init" + std::to_string(initialization);
  if (!plan.port_from_user) {
    plan.rendezvous_port = derived_port(plan.job_identity, plan.reserved_port);
  }
  return plan;
}

JobSecret direct_launch_secret(const LaunchPlan& plan, const JobSecret& user_secret) {
  return user_secret.derived(plan.job_identity);
}

LaunchPlan detect_launch(const EnvironmentMap& env) {
  if (const std::string* controller = find(env, env::kController)) {
    LaunchPlan plan;
    plan.kind = LaunchKind::kRunrunLauncher;
    plan.backend = *controller == "gloo" ? "gloo" : "mpi";
    plan.description =
        "runrun's launcher (" + std::string(env::kController) + "=" + *controller + ")";
    return plan;
  }
  if (find(env, "OMPI_COMM_WORLD_SIZE")) {
    LaunchPlan plan;
    plan.kind = LaunchKind::kMpirun;
    plan.description =
        "Open MPI's mpirun (OMPI_COMM_WORLD_SIZE=" + *find(env, "OMPI_COMM_WORLD_SIZE") + ")";
    return plan;
  }
  if (find(env, "WORLD_SIZE")) return torchrun_plan(env);
  if (find(env, "PET_NNODES")) return pet_plan(env);
  if (slurm_step(env)) return slurm_plan(env);
  LaunchPlan plan;
  plan.description =
      "no launcher (no RUNRUN_CONTROLLER, OMPI_COMM_WORLD_SIZE, WORLD_SIZE, "
      "PET_NNODES or Slurm step): a job of one";
  return plan;
}

LaunchPlan detect_launch_of_this_process() {
  EnvironmentMap env;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    const std::string_view text(*entry);
    const std::size_t equals = text.find('=');
    if (equals == std::string_view::npos) continue;
    env.emplace(std::string(text.substr(0, equals)), std::string(text.substr(equals + 1)));
  }
  return detect_launch(env);
}

}  // namespace runrun::rendezvous
