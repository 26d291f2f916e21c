#include "ops/backend_factory.h"

#include <cstdio>
#include <cstdlib>
#include <string>

#include "common/env_names.h"
#include "common/errors.h"
#include "ops/hierarchical/hierarchical_backend.h"
#include "ops/registry/backend_provider.h"
#include "rendezvous/launch_environment.h"

namespace runrun {
namespace {

// Backends runrun knows of and what a user does to get one this build lacks (data, not code:
// the providers themselves are what the build compiled in).
struct KnownBackend {
  const char* name;
  const char* how_to_get;
};
constexpr KnownBackend kKnownBackends[] = {
    {"mpi",
     "rebuild with Open MPI installed (Debian: libopenmpi-dev; RUNRUN_WITH_MPI=ON), or "
     "use RUNRUN_BACKEND=local for a single process"},
    {"gloo",
     "install the Debian package libgloo-dev and rebuild (RUNRUN_WITH_GLOO), or use mpi "
     "(RUNRUN_BACKEND=mpi or auto)"},
    {"nccl", "not implemented yet"},
};

std::string built_list() {
  std::string text;
  for (const auto& name : built_backends()) text += (text.empty() ? "" : ", ") + name;
  return text;
}

// auto: the backend of what started this process (rendezvous/launch_environment.h): gloo for
// `runrun --gloo`, a Slurm step without an MPI plugin and torchrun; else mpi. A direct launch
// of several ranks runs over gloo only: any other backend would make each rank a job of one.
std::string resolved_name(const std::string& name) {
  const rendezvous::LaunchPlan plan = rendezvous::detect_launch_of_this_process();
  if (name == "auto") return plan.backend;
  RUNRUN_ENFORCE(!rendezvous::is_direct(plan.kind) || name == "gloo", InvalidArgumentError,
                 "the " + name +
                     " backend (RUNRUN_BACKEND or init(backend=...)) cannot form "
                     "this job: it was started by " +
                     plan.description + ", which only the gloo backend joins (" + name +
                     " would run every rank as a job of one); use RUNRUN_BACKEND=auto or gloo" +
                     (plan.kind == rendezvous::LaunchKind::kSlurmStep
                          ? ", or srun --mpi=pmix for MPI"
                          : ", or start the job with mpirun or runrun for MPI"));
  return name;
}

}  // namespace

std::vector<std::string> built_backends() { return BackendRegistry::built().names(); }

std::unique_ptr<Backend> make_backend(const BackendOptions& options) {
  const std::string name = resolved_name(options.name);
  if (const BackendProvider* provider = BackendRegistry::built().find(name)) {
    const std::string why_not =
        provider->unavailable_reason ? provider->unavailable_reason() : std::string();
    RUNRUN_ENFORCE(why_not.empty(), InvalidArgumentError,
                   "the " + name + " backend cannot run in this process: " + why_not);
    auto backend = provider->make(options);
    if (!options.hierarchical_allreduce && !options.hierarchical_tunable) return backend;
    std::string flat_why;
    backend = make_hierarchical(std::move(backend), &flat_why);
    if (!options.hierarchical_allreduce) {
      if (auto* hierarchical = dynamic_cast<HierarchicalBackend*>(backend.get())) {
        hierarchical->set_hierarchical(false);
      }
      return backend;
    }
    if (!flat_why.empty()) {
      const std::string text =
          "RUNRUN_HIERARCHICAL_ALLREDUCE=1 but the allreduce stays flat: " + flat_why;
      if (options.logger) {
        options.logger->warn("{}", text);
      } else if (backend->rank() == 0) {
        std::fprintf(stderr, "runrun: %s\n", text.c_str());  // once per job
      }
    }
    return backend;
  }
  for (const auto& known : kKnownBackends) {
    if (name == known.name) {
      throw UnsupportedError(RUNRUN_WHERE, "the " + name + " backend is not built (built: " +
                                               built_list() + "): " + known.how_to_get);
    }
  }
  throw UnsupportedError(RUNRUN_WHERE, "unknown backend '" + name +
                                           "' (RUNRUN_BACKEND): choose "
                                           "auto or one of the built backends: " +
                                           built_list());
}

void skip_transport_finalize() {
  for (const auto& provider : BackendRegistry::built().providers()) {
    if (provider.on_peer_lost) provider.on_peer_lost();
  }
}

bool threads_multiple(const std::string& name) {
  const BackendProvider* provider = BackendRegistry::built().find(name);
  return provider != nullptr && provider->threads_multiple && provider->threads_multiple();
}

}  // namespace runrun
