// The mpi provider: Open MPI, initialized on first use and finalized at process exit
// (mpi_lifetime.h); a lost peer makes the exit skip MPI_Finalize, which would wait for it.
#include <memory>

#include "ops/mpi/mpi_backend.h"
#include "ops/mpi/mpi_lifetime.h"
#include "ops/registry/backend_provider.h"

namespace runrun {

void register_mpi_provider(BackendRegistry& registry) {
  BackendProvider provider;
  provider.name = "mpi";
  provider.make = [](const BackendOptions& options) -> std::unique_ptr<Backend> {
    mpi::MpiBackendOptions mpi_options;
    mpi_options.logger = options.logger;
    mpi_options.collective_timeout = options.collective_timeout;
    return std::make_unique<mpi::MpiBackend>(mpi_options);
  };
  provider.on_peer_lost = [] { mpi::skip_finalize_at_exit(); };
  provider.threads_multiple = [] { return mpi::threads_multiple(); };
  registry.add(std::move(provider));
}

}  // namespace runrun
