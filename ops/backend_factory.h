#pragma once
// Why: the core must not include any concrete backend header; it asks this factory for a
// backend by name and gets the interface back. Which names exist depends on the build
// (runrun/build_config.h).
// Thread-safety: make_backend may be called from any thread; it returns an object owned by the
// caller (see Backend's threading contract).

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "common/logging.h"
#include "ops/backend.h"

namespace runrun {

struct BackendOptions {
  // auto (gloo in jobs of `runrun --gloo`, else mpi), mpi, gloo, local (one rank, this
  // process; multi-rank local backends are made directly by tests)
  std::string name = "auto";
  Logger logger;              // may be null: backends then log nothing
  // A collective every rank entered that takes longer fails with TimeoutError; 0 = no limit.
  std::chrono::milliseconds collective_timeout{0};
};

// Throws UnsupportedError naming the backends this build has when `name` is not one of them.
std::unique_ptr<Backend> make_backend(const BackendOptions& options);

// Names of the backends compiled into this build, e.g. {"mpi", "local"} (from
// ops/backend_catalog.h).
std::vector<std::string> built_backends();

// Whether MPI provides MPI_THREAD_MULTIPLE in this process. Initializes nothing: true only when
// MPI is built, initialized (by runrun or the application) and granted that level; false when
// MPI is not built or not (yet) initialized.
bool mpi_threads_multiple();

// A peer process was lost: MPI_Finalize at exit could wait for it forever, so transports that
// finalize at exit skip it. Any thread.
void skip_transport_finalize();

}  // namespace runrun
