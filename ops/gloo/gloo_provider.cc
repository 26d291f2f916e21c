// The gloo provider: ranks of a `runrun --gloo` job connect through the launcher's rendezvous
// server, ranks that srun or torchrun started through rank 0's (gloo_from_environment.h).
// Nothing to do at process exit.
#include <cstdlib>
#include <memory>
#include <string>

#include "common/env_names.h"
#include "ops/registry/backend_provider.h"
#include "ops/gloo/gloo_from_environment.h"
#include "rendezvous/launch_environment.h"

namespace runrun {

void register_gloo_provider(BackendRegistry& registry) {
  BackendProvider provider;
  provider.name = "gloo";
  provider.unavailable_reason = []() -> std::string {
    // An elastic worker gets its rank and size per generation (rendezvous/elastic_worker.h).
    if (std::getenv(env::kController) == nullptr &&
        rendezvous::is_direct(rendezvous::detect_launch_of_this_process().kind)) {
      return "";  // srun or torchrun started it: rank 0 serves the rendezvous
    }
    const bool elastic = std::getenv(env::kElasticWorker) != nullptr;
    for (const char* name : {env::kRank, env::kSize, env::kRendezvousAddr, env::kRendezvousPort}) {
      const bool assigned_later = elastic && (name == env::kRank || name == env::kSize);
      if (!assigned_later && std::getenv(name) == nullptr) {
        return std::string(name) +
               " is not set: the gloo backend runs in jobs started by the "
               "launcher (`runrun --gloo -np N COMMAND`), srun or torchrun";
      }
    }
    return "";
  };
  provider.make = [](const BackendOptions& options) {
    gloo_backend::GlooEnvironmentOptions gloo_options;
    gloo_options.logger = options.logger;
    gloo_options.collective_timeout = options.collective_timeout;
    return gloo_backend::make_gloo_backend_from_environment(gloo_options);
  };
  registry.add(std::move(provider));
}

}  // namespace runrun
