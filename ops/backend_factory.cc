#include "ops/backend_factory.h"

#include <string>

#include "common/errors.h"
#include "ops/backend_catalog.h"
#include "runrun/build_config.h"

#if RUNRUN_HAVE_MPI
#include "ops/mpi/mpi_backend.h"
#include "ops/mpi/mpi_lifetime.h"
#endif
#include "ops/local/local_backend.h"

namespace runrun {
namespace {

std::string built_list() {
  std::string text;
  for (const auto& name : built_backends()) text += (text.empty() ? "" : ", ") + name;
  return text;
}

#if RUNRUN_HAVE_MPI
std::unique_ptr<Backend> make_mpi(const BackendOptions& options) {
  mpi::MpiBackendOptions mpi_options;
  mpi_options.logger = options.logger;
  mpi_options.collective_timeout = options.collective_timeout;
  return std::make_unique<mpi::MpiBackend>(mpi_options);
}
#endif

}  // namespace

std::vector<std::string> built_backends() {
  std::vector<std::string> names;
  if (kBuiltBackends.mpi) names.emplace_back("mpi");
  if (kBuiltBackends.gloo) names.emplace_back("gloo");
  if (kBuiltBackends.nccl) names.emplace_back("nccl");
  if (kBuiltBackends.local) names.emplace_back("local");
  return names;
}

std::unique_ptr<Backend> make_backend(const BackendOptions& options) {
  const std::string& name = options.name;
  if (name == "auto" || name == "mpi") {
#if RUNRUN_HAVE_MPI
    return make_mpi(options);
#else
    throw UnsupportedError(RUNRUN_WHERE, "backend '" + name +
                                             "': this build has no process backend (built: " +
                                             built_list() +
                                             "); rebuild with RUNRUN_WITH_MPI=ON, or use "
                                             "RUNRUN_BACKEND=local for a single process");
#endif
  }
  if (name == "local") {
    LocalWorldOptions local_options;
    local_options.collective_timeout = options.collective_timeout;
    return std::make_unique<LocalBackend>(std::make_shared<LocalWorld>(1, local_options), 0);
  }
  if (name == "gloo") {
#if RUNRUN_HAVE_GLOO
    // ops/gloo is built, but a job has no rendezvous store to create it from until the
    // launcher provides one (runrun --gloo).
    throw UnsupportedError(RUNRUN_WHERE,
                           "the gloo backend cannot be selected yet: it is built, but ranks need "
                           "the launcher's rendezvous store (runrun --gloo), which this version "
                           "does not have; use mpi (RUNRUN_BACKEND=mpi or auto; built: " +
                               built_list() + ")");
#else
    throw UnsupportedError(RUNRUN_WHERE,
                           "the gloo backend is not built: install the Debian package "
                           "libgloo-dev and rebuild (RUNRUN_WITH_GLOO), or use mpi "
                           "(RUNRUN_BACKEND=mpi or auto; built: " +
                               built_list() + ")");
#endif
  }
  throw UnsupportedError(RUNRUN_WHERE, "unknown backend '" + name + "' (RUNRUN_BACKEND): choose "
                                           "auto or one of the built backends: " + built_list());
}

void skip_transport_finalize() {
#if RUNRUN_HAVE_MPI
  mpi::skip_finalize_at_exit();
#endif
}

bool mpi_threads_multiple() {
#if RUNRUN_HAVE_MPI
  return mpi::threads_multiple();
#else
  return false;
#endif
}

}  // namespace runrun
