#include <catch2/catch.hpp>

#include "common/errors.h"
#include "rendezvous/launch_environment.h"

using runrun::InvalidArgumentError;
using namespace runrun::rendezvous;

namespace {

std::string error_of(const EnvironmentMap& env) {
  try {
    detect_launch(env);
  } catch (const InvalidArgumentError& e) {
    return e.what();
  }
  return "";
}

EnvironmentMap torchrun(int rank) {
  return {{"WORLD_SIZE", "4"},
          {"RANK", std::to_string(rank)},
          {"LOCAL_RANK", std::to_string(rank % 2)},
          {"LOCAL_WORLD_SIZE", "2"},
          {"GROUP_RANK", std::to_string(rank / 2)},
          {"MASTER_ADDR", "10.0.0.1"},
          {"MASTER_PORT", "29500"},
          {"TORCHELASTIC_RUN_ID", "abc"}};
}

EnvironmentMap srun_task(int rank, const std::string& step = "0") {
  return {{"SLURM_JOB_ID", "4242"},
          {"SLURM_STEP_ID", step},
          {"SLURM_PROCID", std::to_string(rank)},
          {"SLURM_STEP_NUM_TASKS", "4"},
          {"SLURM_NTASKS", "8"},
          {"SLURM_LOCALID", std::to_string(rank % 2)},
          {"SLURM_NODEID", std::to_string(rank / 2)},
          {"SLURM_STEP_NODELIST", "node[07-08]"},
          {"SLURM_STEP_TASKS_PER_NODE", "2(x2)"}};
}

}  // namespace

TEST_CASE("no launcher: a job of one over the default backend") {
  const auto plan = detect_launch({{"HOME", "/root"}});
  CHECK(plan.kind == LaunchKind::kSingle);
  CHECK(plan.backend == "mpi");
  CHECK(plan.size == 1);
}

TEST_CASE("runrun's launcher and mpirun come first, whatever else is set") {
  auto env = torchrun(1);
  env["RUNRUN_CONTROLLER"] = "gloo";
  CHECK(detect_launch(env).kind == LaunchKind::kRunrunLauncher);
  CHECK(detect_launch(env).backend == "gloo");
  env["RUNRUN_CONTROLLER"] = "mpi";
  CHECK(detect_launch(env).backend == "mpi");
  auto mpirun = srun_task(2);
  mpirun["OMPI_COMM_WORLD_SIZE"] = "4";
  CHECK(detect_launch(mpirun).kind == LaunchKind::kMpirun);
  CHECK(detect_launch(mpirun).backend == "mpi");
}

TEST_CASE(
    "torchrun's variables form a Gloo job with rank 0 serving at MASTER_ADDR on a port of "
    "its own") {
  const auto plan = detect_launch(torchrun(3));
  CHECK(plan.kind == LaunchKind::kTorchrun);
  CHECK(plan.backend == "gloo");
  CHECK(plan.rank == 3);
  CHECK(plan.size == 4);
  CHECK(plan.host_id == "node 1");
  CHECK(plan.rendezvous_host == "10.0.0.1");
  CHECK(plan.rendezvous_port != 29500);
  CHECK(plan.rendezvous_port >= 20000);
  CHECK(plan.rendezvous_port < 32000);
  CHECK_FALSE(plan.user_secret);
  CHECK_THAT(plan.description, Catch::Contains("torchrun") && Catch::Contains("WORLD_SIZE=4") &&
                                   Catch::Contains("not authenticated"));
  // Every rank derives the same port and identity.
  for (int rank = 0; rank < 4; ++rank) {
    CHECK(detect_launch(torchrun(rank)).rendezvous_port == plan.rendezvous_port);
    CHECK(detect_launch(torchrun(rank)).job_identity == plan.job_identity);
  }
  // Another run is another job; a restart count is not part of it (after a membership change
  // torchrun's agents count differently).
  auto other_run = torchrun(3);
  other_run["TORCHELASTIC_RUN_ID"] = "def";
  CHECK(detect_launch(other_run).job_identity != plan.job_identity);
  auto restarted = torchrun(3);
  restarted["TORCHELASTIC_RESTART_COUNT"] = "1";
  CHECK(detect_launch(restarted).job_identity == plan.job_identity);
  CHECK(plan.several_hosts);  // LOCAL_WORLD_SIZE 2 of 4
  auto one_host = torchrun(1);
  one_host["LOCAL_WORLD_SIZE"] = "4";
  CHECK_FALSE(detect_launch(one_host).several_hosts);
  // Each init() of a process is a job of its own: another identity and port, the same on
  // every rank.
  const auto second = for_initialization(plan, 1);
  CHECK(second.job_identity != plan.job_identity);
  CHECK(second.rendezvous_port != plan.rendezvous_port);
  CHECK(for_initialization(detect_launch(torchrun(0)), 1).rendezvous_port ==
        second.rendezvous_port);
  CHECK(for_initialization(plan, 0).job_identity == plan.job_identity);
  // The user's port, address and secret win.
  auto chosen = torchrun(0);
  chosen["RUNRUN_RENDEZVOUS_PORT"] = "31000";
  chosen["RUNRUN_RENDEZVOUS_ADDR"] = "master.svc";
  chosen["RUNRUN_RENDEZVOUS_SECRET"] = std::string(64, 'a');
  const auto chosen_plan = detect_launch(chosen);
  CHECK(chosen_plan.rendezvous_port == 31000);
  CHECK(for_initialization(chosen_plan, 2).rendezvous_port == 31000);
  CHECK(chosen_plan.rendezvous_host == "master.svc");
  CHECK(chosen_plan.user_secret);
  CHECK_THAT(chosen_plan.description, Catch::Contains("authenticated by RUNRUN_RENDEZVOUS_SECRET"));
}

TEST_CASE(
    "torchrun's variables that say 'several ranks' but cannot form a job are an error "
    "naming what was read, never a job of one") {
  auto env = torchrun(1);
  env.erase("MASTER_ADDR");
  CHECK_THAT(error_of(env), Catch::Contains("MASTER_ADDR is not set") &&
                                Catch::Contains("WORLD_SIZE, RANK, LOCAL_RANK") &&
                                Catch::Contains("unset WORLD_SIZE"));
  env = torchrun(1);
  env.erase("RANK");
  CHECK_THAT(error_of(env), Catch::Contains("RANK is not set"));
  env = torchrun(1);
  env["RANK"] = "4";
  CHECK_THAT(error_of(env), Catch::Contains("RANK='4' is not a whole number in 0-3"));
  env = torchrun(1);
  env["MASTER_PORT"] = "http";
  CHECK_THAT(error_of(env), Catch::Contains("MASTER_PORT='http'"));
  env = torchrun(1);
  env["WORLD_SIZE"] = "four";
  CHECK_THAT(error_of(env), Catch::Contains("WORLD_SIZE='four'"));
  CHECK(detect_launch({{"WORLD_SIZE", "1"}}).kind == LaunchKind::kSingle);
  // PyTorchJob with nprocPerNode 4 and no torchrun: WORLD_SIZE counts processes nobody starts.
  env = torchrun(1);
  env.erase("LOCAL_RANK");
  env["PET_NPROC_PER_NODE"] = "4";
  CHECK_THAT(error_of(env), Catch::Contains("PET_NPROC_PER_NODE=4") &&
                                Catch::Contains("run the script under torchrun"));
  env["PET_NPROC_PER_NODE"] = "auto";  // the operator's default: one process per pod
  CHECK(detect_launch(env).kind == LaunchKind::kTorchrun);
}

TEST_CASE("Kubeflow Trainer's PET_* variables without torchrun: one process per node") {
  const EnvironmentMap env = {{"PET_NNODES", "3"},
                              {"PET_NODE_RANK", "2"},
                              {"PET_MASTER_ADDR", "job-node-0-0.job"},
                              {"PET_MASTER_PORT", "29400"},
                              {"PET_NPROC_PER_NODE", "1"}};
  const auto plan = detect_launch(env);
  CHECK(plan.kind == LaunchKind::kTorchrun);
  CHECK(plan.size == 3);
  CHECK(plan.rank == 2);
  CHECK(plan.rendezvous_host == "job-node-0-0.job");
  auto several = env;
  several["PET_NPROC_PER_NODE"] = "4";
  CHECK_THAT(error_of(several),
             Catch::Contains("PET_NPROC_PER_NODE='4'") && Catch::Contains("torchrun"));
}

TEST_CASE(
    "an srun task without an MPI plugin forms the step's job, rank 0 serving on the first "
    "node; with one, MPI forms it") {
  const auto plan = detect_launch(srun_task(3));
  CHECK(plan.kind == LaunchKind::kSlurmStep);
  CHECK(plan.backend == "gloo");
  CHECK(plan.rank == 3);
  CHECK(plan.size == 4);  // the step's tasks, not the job's
  CHECK(plan.host_id == "node 1");
  CHECK(plan.rendezvous_host == "node07");
  CHECK_THAT(plan.description,
             Catch::Contains("job 4242.0") && Catch::Contains("SLURM_STEP_NUM_TASKS=4"));
  // Two steps of one job, or two jobs, never share a rendezvous identity (nor, mostly, a port).
  CHECK(detect_launch(srun_task(3, "1")).job_identity != plan.job_identity);
  CHECK(detect_launch(srun_task(3, "1")).rendezvous_port != plan.rendezvous_port);
  CHECK(direct_launch_secret(plan, {}).hex() !=
        direct_launch_secret(detect_launch(srun_task(3, "1")), {}).hex());
  CHECK(direct_launch_secret(plan, {}).hex() ==
        direct_launch_secret(detect_launch(srun_task(0)), {}).hex());
  const auto user = JobSecret::from_hex(std::string(64, 'b'), "test");
  CHECK(direct_launch_secret(plan, user).hex() != direct_launch_secret(plan, {}).hex());

  CHECK(plan.several_hosts);
  auto pmix = srun_task(1);
  pmix["PMIX_RANK"] = "1";
  pmix["SLURM_MPI_TYPE"] = "pmix";
  CHECK(detect_launch(pmix).kind == LaunchKind::kSlurmMpi);
  CHECK(detect_launch(pmix).backend == "mpi");
  auto pmi2 = srun_task(1);
  pmi2["PMI_RANK"] = "1";
  CHECK(detect_launch(pmi2).kind == LaunchKind::kSlurmMpi);
  // SLURM_MPI_TYPE alone is srun's input, maybe stale: no PMI server means no MPI job.
  auto stale = srun_task(1);
  stale["SLURM_MPI_TYPE"] = "pmix";
  CHECK(detect_launch(stale).kind == LaunchKind::kSlurmStep);
  auto one_node = srun_task(1);
  one_node["SLURM_STEP_NODELIST"] = "node07";
  CHECK_FALSE(detect_launch(one_node).several_hosts);
}

TEST_CASE("a batch script or salloc's shell is not an srun task") {
  // Slurm's special step ids (batch, extern, interactive...: from 0xfffffff0 up, in any release).
  for (const char* step : {"4294967291", "4294967292", "4294967290", "4294967294", "4294967295",
                           "4294967280", "batch", "-1"}) {
    CHECK(detect_launch(srun_task(0, step)).kind == LaunchKind::kSingle);
  }
  CHECK(detect_launch(srun_task(0, "4294967279")).kind == LaunchKind::kSlurmStep);
  auto batch = srun_task(0);
  batch.erase("SLURM_STEP_ID");
  CHECK(detect_launch(batch).kind == LaunchKind::kSingle);
  // What a batch script has: SLURM_PROCID and the job's task count, but no step's.
  auto script = srun_task(0);
  script.erase("SLURM_STEP_NUM_TASKS");
  CHECK(detect_launch(script).kind == LaunchKind::kSingle);
  auto one = srun_task(0);
  one["SLURM_STEP_NUM_TASKS"] = "1";
  CHECK(detect_launch(one).kind == LaunchKind::kSingle);
}

TEST_CASE("torchrun started by srun is torchrun's job; rank 0 off the first node is refused") {
  auto env = srun_task(0);
  for (const auto& [name, value] : torchrun(2)) env[name] = value;
  CHECK(detect_launch(env).kind == LaunchKind::kTorchrun);
  CHECK(detect_launch(env).rank == 2);
  auto misplaced = srun_task(0);
  misplaced["SLURM_NODEID"] = "1";
  CHECK_THAT(error_of(misplaced), Catch::Contains("not on the step's first node"));
  misplaced["RUNRUN_RENDEZVOUS_ADDR"] = "node08";  // what the message says to do
  CHECK(detect_launch(misplaced).rendezvous_host == "node08");
  auto bad_list = srun_task(1);
  bad_list["SLURM_STEP_NODELIST"] = "node[07-08";
  CHECK_THAT(error_of(bad_list), Catch::Contains("SLURM_STEP_NODELIST='node[07-08'"));
}
