// The gloo provider: ranks of a `runrun --gloo` job connect through the launcher's rendezvous
// server (gloo_from_environment.h). Nothing to do at process exit.
#include <cstdlib>
#include <memory>
#include <string>

#include "common/env_names.h"
#include "ops/backend_provider.h"
#include "ops/gloo/gloo_from_environment.h"

namespace runrun {

void register_gloo_provider(BackendRegistry& registry) {
  BackendProvider provider;
  provider.name = "gloo";
  provider.unavailable_reason = []() -> std::string {
    // An elastic worker gets its rank and size per generation (rendezvous/elastic_worker.h).
    const bool elastic = std::getenv(env::kElasticWorker) != nullptr;
    for (const char* name : {env::kRank, env::kSize, env::kRendezvousAddr, env::kRendezvousPort}) {
      const bool assigned_later = elastic && (name == env::kRank || name == env::kSize);
      if (!assigned_later && std::getenv(name) == nullptr) {
        return std::string(name) + " is not set: the gloo backend runs in jobs started by the "
                                   "launcher, `runrun --gloo -np N COMMAND`";
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
