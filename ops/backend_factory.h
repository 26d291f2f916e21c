#pragma once
// Why: the core must not include any concrete backend header; it asks this factory for a
// backend by name and gets the interface back. The factory knows no transport either: it looks
// the name up in the registry of providers this build compiled in
// (ops/registry/backend_provider.h).
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
  // auto (the backend of the launcher mode that started this process: gloo under
  // `runrun --gloo`, else mpi), mpi, gloo, local (one rank, this process; multi-rank local
  // backends are made directly by tests)
  std::string name = "auto";
  Logger logger;  // may be null: backends then log nothing
  // A collective every rank entered that takes longer fails with TimeoutError; 0 = no limit.
  std::chrono::milliseconds collective_timeout{0};
  // Wrap the backend in ops/hierarchical's decorator (RUNRUN_HIERARCHICAL_ALLREDUCE) where the
  // job's topology allows it; make_backend logs (warn) why not where it does not.
  bool hierarchical_allreduce = false;
  // RUNRUN_AUTOTUNE: build that decorator where the topology allows even without
  // hierarchical_allreduce (switched off then, silently otherwise), so the autotuner can try it.
  bool hierarchical_tunable = false;
};

// Throws UnsupportedError naming the backends this build has when `name` is not one of them.
// With options.hierarchical_allreduce, wraps the backend in ops/hierarchical's decorator where
// the job's topology allows it (collective: every rank must pass the same value); with
// options.hierarchical_tunable, does so too but leaves it switched off unless requested.
std::unique_ptr<Backend> make_backend(const BackendOptions& options);

// Names of the backends compiled into this build, e.g. {"local", "mpi", "gloo"} (the
// registry's providers; ops/backend_catalog.h's controllers agree, backend_factory_test checks).
std::vector<std::string> built_backends();

// Whether backend `name`'s transport grants concurrent calls from several threads in this
// process now (its provider's threads_multiple hook; for "mpi": MPI_THREAD_MULTIPLE, Horovod's
// mpi_threads_supported()). Initializes nothing: false for a backend that is not built, has no
// such notion, or is not (yet) initialized.
bool threads_multiple(const std::string& name);

// A peer process was lost: MPI_Finalize at exit could wait for it forever, so transports that
// finalize at exit skip it (every provider's on_peer_lost hook). Any thread.
void skip_transport_finalize();

}  // namespace runrun
