#include "ops/backend_factory.h"

#include <cstdlib>
#include <string>

#include "common/env_names.h"
#include "common/errors.h"
#include "ops/backend_catalog.h"
#include "runrun/build_config.h"

#if RUNRUN_HAVE_MPI
#include "ops/mpi/mpi_backend.h"
#include "ops/mpi/mpi_lifetime.h"
#endif
#if RUNRUN_HAVE_GLOO
#include "ops/gloo/gloo_from_environment.h"
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

// auto: the backend of the launcher mode that started this process (RUNRUN_CONTROLLER: gloo
// for `runrun --gloo`), else mpi.
std::string resolved_name(const std::string& name) {
  if (name != "auto") return name;
  const char* controller = std::getenv(env::kController);
  return controller != nullptr && std::string(controller) == "gloo" ? "gloo" : "mpi";
}

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
  const std::string name = resolved_name(options.name);
  if (name == "mpi") {
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
    gloo_backend::GlooEnvironmentOptions gloo_options;
    gloo_options.logger = options.logger;
    gloo_options.collective_timeout = options.collective_timeout;
    return gloo_backend::make_gloo_backend_from_environment(gloo_options);
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
