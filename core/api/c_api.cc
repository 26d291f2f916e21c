// The C API (core/include/runrun/c_api.h) over the C++ Runtime: its lifetime and queries,
// process sets and the timeline here; collectives in c_api_collectives.cc, handles in
// c_api_handles.cc, CUDA in c_api_cuda.cc, elastic training in c_api_elastic.cc, the job store in
// c_api_store.cc. Every function catches every exception at the boundary and turns it into a
// status code plus message.
#include "runrun/c_api.h"

#include <cstdlib>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/env_names.h"
#include "common/errors.h"
#include "common/logging.h"
#include "common/fork_generation.h"
#include "common/rank_events.h"
#include "core/api/c_api_last_error.h"
#include "core/api/c_api_objects.h"
#include "core/runtime/config.h"
#include "core/api/init_checks.h"
#include "core/runtime/runtime.h"
#include "ops/backend_catalog.h"
#include "ops/backend_factory.h"
#include "rendezvous/launch_environment.h"
#include "runrun/build_config.h"

namespace {

thread_local std::string last_error;

}  // namespace

void runrun::capi::set_last_error(const std::string& message) { last_error = message; }

void runrun::capi::require(bool condition, const char* message) {
  if (!condition) throw runrun::InvalidArgumentError(RUNRUN_WHERE, message);
}

runrun::Runtime& runrun::capi::runtime_of(runrun_runtime* rt) {
  require(rt && rt->runtime, "runtime is null: call runrun_init first");
  if (runrun::forked_since(rt->made_in)) {
    throw runrun::UnsupportedError(RUNRUN_WHERE,
                                   runrun::forked_child_message("runrun", rt->made_in));
  }
  return *rt->runtime;
}

using runrun::capi::guarded;
using runrun::capi::require;
using runrun::capi::runtime_of;

extern "C" {

const char* runrun_last_error(void) { return last_error.c_str(); }

runrun_status runrun_init(const char* backend, runrun_runtime** out) {
  return guarded([&] {
    require(out != nullptr, "runrun_init: out is null");
    runrun::watch_forks();
    runrun::Config config;
    runrun::rendezvous::LaunchPlan launch;
    runrun::EarlyPlace place;
    // What this rank alone can refuse is refused before the transport connects the ranks: the
    // rank then fails alone and at once, and tells its launcher so (core/api/init_checks.h).
    try {
      config = runrun::Config::load();
      // Read before the backend is made: making it removes the rendezvous secret from the
      // environment, which the description mentions.
      launch = runrun::rendezvous::detect_launch_of_this_process();
      const bool alone = launch.kind == runrun::rendezvous::LaunchKind::kSingle;
      place = runrun::early_place_of_this_process(alone);
      runrun::check_before_transport(config, place);
    } catch (...) {
      runrun::report_init_failure(-1);
      throw;
    }
    runrun::BackendOptions options;
    options.name = backend && *backend ? backend : config.backend;
    // At debug or trace level the backend logs while it connects (the Gloo backend's start-up
    // phases, read by tests/perf/scale/startup_bench.sh), before the runtime's logger exists.
    // At other levels it gets none, as before: its warnings keep their own fallbacks.
    if (runrun::parse_log_level(config.log_level) <= spdlog::level::debug) {
      const char* size = std::getenv(runrun::env::kSize);
      options.logger =
          runrun::make_rank_logger(place.rank, size ? std::atoi(size) : -1, config.log_level);
    }
    options.collective_timeout = config.collective_timeout;
    options.hierarchical_allreduce = config.hierarchical_allreduce;
    options.hierarchical_tunable = config.autotune.enabled;
    auto runtime = std::make_unique<runrun::Runtime>(runrun::make_backend(options), config);
    if (runtime->logger()) runtime->logger()->info("started by {}", launch.description);
    *out = new runrun_runtime{std::move(runtime), runrun::fork_stamp()};
  });
}

runrun_status runrun_shutdown(runrun_runtime* rt) {
  if (rt && rt->runtime && runrun::forked_since(rt->made_in)) return RUNRUN_OK;  // the parent's
  return guarded([&] { runtime_of(rt).shutdown(); });
}

void runrun_destroy(runrun_runtime* rt) {
  if (!rt) return;
  // In a forked child the runtime's threads do not exist (nothing to join) and its connections
  // are the parent's: it is left as it is, for the process's exit to reclaim.
  if (rt->runtime && runrun::forked_since(rt->made_in)) return;
  guarded([&] { rt->runtime.reset(); });
  delete rt;
}

int runrun_is_running(const runrun_runtime* rt) {
  return rt && rt->runtime && rt->runtime->running() ? 1 : 0;
}

runrun_status runrun_get_topology(const runrun_runtime* rt, runrun_topology* out) {
  return guarded([&] {
    require(rt && rt->runtime && out, "runrun_get_topology: null argument");
    const runrun::Topology& t = rt->runtime->topology();
    *out = runrun_topology{t.rank,       t.size,       t.local_rank,         t.local_size,
                           t.cross_rank, t.cross_size, t.homogeneous ? 1 : 0};
  });
}

const char* runrun_backend_name(const runrun_runtime* rt) {
  return rt && rt->runtime ? rt->runtime->backend_name().data() : "";
}

void runrun_get_build_info(runrun_build_info* out) {
  // What is implemented and built (ops/backend_catalog.h), not what CMake found.
  using runrun::backend_built;
  if (out) {
    *out = runrun_build_info{backend_built("mpi"), backend_built("gloo"), backend_built("nccl"),
                             backend_built("cuda")};
  }
}

const char* runrun_version(void) { return RUNRUN_VERSION; }

int runrun_mpi_threads_supported(void) { return runrun::threads_multiple("mpi") ? 1 : 0; }

runrun_status runrun_add_process_set(runrun_runtime* rt, const int32_t* ranks, size_t n,
                                     int32_t* id_out) {
  return guarded([&] {
    require(id_out && (ranks || n == 0), "runrun_add_process_set: null argument");
    *id_out = runtime_of(rt).add_process_set(std::vector<int>(ranks, ranks + n));
  });
}

runrun_status runrun_remove_process_set(runrun_runtime* rt, int32_t id) {
  return guarded([&] { runtime_of(rt).remove_process_set(id); });
}

runrun_status runrun_process_set_ranks(const runrun_runtime* rt, int32_t id, int32_t* ranks,
                                       size_t capacity, size_t* n) {
  return guarded([&] {
    require(rt && rt->runtime && n && (ranks || capacity == 0),
            "runrun_process_set_ranks: null argument");
    std::vector<int> members = rt->runtime->process_set_ranks(id);
    *n = members.size();
    for (size_t i = 0; i < capacity && i < members.size(); ++i) ranks[i] = members[i];
  });
}

int32_t runrun_process_set_rank(const runrun_runtime* rt, int32_t id) {
  if (!rt || !rt->runtime) return -1;
  return rt->runtime->process_set_rank(id);
}

runrun_status runrun_get_counters(const runrun_runtime* rt, int32_t process_set,
                                  runrun_counters* out) {
  return guarded([&] {
    require(rt && rt->runtime && out, "runrun_get_counters: null argument");
    const runrun::ProcessSetWorker& w = rt->runtime->worker(process_set);
    *out = runrun_counters{w.negotiation_rounds(), w.coordinator_rounds(), w.cache_hits(),
                           w.fused_collectives()};
  });
}

runrun_status runrun_get_rank_lateness(const runrun_runtime* rt, runrun_rank_lateness* out,
                                       size_t capacity, size_t* n) {
  return guarded([&] {
    require(rt && rt->runtime && n && (out || capacity == 0),
            "runrun_get_rank_lateness: null argument");
    *n = 0;
    const runrun::RankLatenessRecorder* lateness = rt->runtime->worker(0).lateness();
    if (!lateness) return;
    std::vector<runrun::RankLatenessStats::PerRank> ranks = lateness->snapshot();
    *n = ranks.size();
    for (size_t r = 0; r < capacity && r < ranks.size(); ++r) {
      out[r] = runrun_rank_lateness{ranks[r].median_s, ranks[r].mean_s, ranks[r].samples};
    }
  });
}

runrun_status runrun_start_timeline(runrun_runtime* rt, const char* path) {
  return runrun_start_timeline_marking_cycles(rt, path, 0);
}

runrun_status runrun_start_timeline_marking_cycles(runrun_runtime* rt, const char* path,
                                                   int mark_cycles) {
  return guarded([&] {
    require(path && *path, "runrun_start_timeline: the path is empty");
    runtime_of(rt).start_timeline(path, mark_cycles != 0);
  });
}

runrun_status runrun_stop_timeline(runrun_runtime* rt) {
  return guarded([&] { runtime_of(rt).stop_timeline(); });
}

}  // extern "C"
