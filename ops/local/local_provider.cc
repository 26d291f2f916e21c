// The local provider: one rank in this process (RUNRUN_BACKEND=local). Tests build multi-rank
// local worlds directly (ops/local/local_world.h).
#include <memory>

#include "ops/local/local_backend.h"
#include "ops/registry/backend_provider.h"

namespace runrun {

void register_local_provider(BackendRegistry& registry) {
  BackendProvider provider;
  provider.name = "local";
  provider.make = [](const BackendOptions& options) -> std::unique_ptr<Backend> {
    LocalWorldOptions local_options;
    local_options.collective_timeout = options.collective_timeout;
    return std::make_unique<LocalBackend>(std::make_shared<LocalWorld>(1, local_options), 0);
  };
  registry.add(std::move(provider));
}

}  // namespace runrun
