// The C API (core/include/runrun/c_api.h) over the C++ Runtime: converts DLPack tensors,
// catches every exception at the boundary and turns it into a status code plus message.
#include "runrun/c_api.h"

#include <cmath>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "common/env_names.h"
#include "common/errors.h"
#include "common/logging.h"
#include "common/fork_generation.h"
#include "common/rank_events.h"
#include "core/api/allocated_output.h"
#include "core/api/c_api_last_error.h"
#include "core/runtime/config.h"
#include "core/api/dlpack_convert.h"
#include "core/api/init_checks.h"
#include "core/runtime/runtime.h"
#include "ops/backend_catalog.h"
#include "ops/backend_factory.h"
#include "rendezvous/launch_environment.h"
#include "runrun/build_config.h"

struct runrun_runtime {
  std::unique_ptr<runrun::Runtime> runtime;
  runrun::ForkStamp made_in;  // a forked child refuses to use it (common/fork_generation.h)
};

struct runrun_handle {
  std::shared_ptr<runrun::Handle> handle;
  std::string error;  // keeps runrun_handle_error's pointer valid
  std::vector<int64_t> splits;
  runrun::ForkStamp made_in;
};

namespace {

thread_local std::string last_error;

}  // namespace

void runrun::capi::set_last_error(const std::string& message) { last_error = message; }

namespace {

runrun_status to_status(runrun::ErrorCode code) { return static_cast<runrun_status>(code); }

using runrun::capi::guarded;

void require(bool condition, const char* message) {
  if (!condition) throw runrun::InvalidArgumentError(RUNRUN_WHERE, message);
}

runrun::Runtime& runtime_of(runrun_runtime* rt) {
  require(rt && rt->runtime, "runtime is null: call runrun_init first");
  if (runrun::forked_since(rt->made_in)) {
    throw runrun::UnsupportedError(RUNRUN_WHERE,
                                   runrun::forked_child_message("runrun", rt->made_in));
  }
  return *rt->runtime;
}

// A handle's op that cannot complete in this process: it was enqueued before a fork (the
// background thread that runs it stayed in the parent). Sets the handle's error.
bool stranded_by_fork(runrun_handle* h) {
  if (!runrun::forked_since(h->made_in)) return false;
  const std::optional<bool> done = h->handle->try_done();  // a lock held at the fork: stranded
  if (done && *done) return false;
  h->error = runrun::forked_child_message("waiting for an op enqueued before the fork",
                                          h->made_in);
  return true;
}

runrun::AllreduceOptions options_of(const runrun_allreduce_options* o) {
  runrun::AllreduceOptions options;
  if (!o) return options;
  options.op = runrun::reduce_op_from_int(o->op);
  options.prescale = o->prescale_factor;
  options.postscale = o->postscale_factor;
  options.process_set = o->process_set;
  return options;
}

std::string describe(const char* op, const char* name, int rank, const char* role) {
  return std::string(op) + " of tensor '" + (name ? name : "") + "' on rank " +
         std::to_string(rank) + ": " + role;
}

// The description ("allreduce of tensor 'w' on rank 1: input") is built only for a refused
// tensor: view_from_dlpack is pure, so a refusal is redone with it for the message. This runs
// once per tensor enqueued (issue 12, point 6: no strings built on the per-tensor path).
void view_into(const char* op, const char* name, int rank, const DLTensor* t, const char* role,
               runrun::TensorView& into) {
  static const std::string kUndescribed;
  try {
    runrun::view_from_dlpack(t, kUndescribed, into);
  } catch (const runrun::Error&) {
    runrun::view_from_dlpack(t, describe(op, name, rank, role), into);
  }
}

runrun::TensorView view(const char* op, const char* name, int rank, const DLTensor* t,
                        const char* role) {
  runrun::TensorView result;
  view_into(op, name, rank, t, role, result);
  return result;
}

std::string name_of(const char* name) { return name ? name : ""; }

// The names and input views of a grouped call's tensors.
struct GroupArgs {
  std::vector<std::string> names;
  std::vector<runrun::TensorView> inputs;
};

GroupArgs group_args(const char* op, int rank, const char* const* names,
                     const DLTensor* const* inputs, size_t n) {
  GroupArgs args;
  for (size_t i = 0; i < n; ++i) {
    args.names.push_back(name_of(names[i]));
    args.inputs.push_back(view(op, names[i], rank, inputs[i], "input"));
  }
  return args;
}

// runrun_handle structs go back to this list on release and serve the next ops: made on the
// enqueuing thread a burst at a time and freed after the burst, each missed that thread's
// malloc cache (~260 instructions, issue 12 point 6). Leaked on purpose, so that a handle
// released during static destruction still finds it. Any thread (one mutex).
class HandleFreeList {
 public:
  runrun_handle* take(std::shared_ptr<runrun::Handle> handle) {
    runrun_handle* h = nullptr;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!spare_.empty()) {
        h = spare_.back();
        spare_.pop_back();
      }
    }
    if (h == nullptr) return new runrun_handle{std::move(handle), {}, {}, runrun::fork_stamp()};
    h->handle = std::move(handle);
    h->made_in = runrun::fork_stamp();
    return h;
  }
  void give_back(runrun_handle* h) {
    h->handle.reset();  // may free the op's outputs: outside the lock
    h->error.clear();
    h->splits.clear();
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (spare_.size() < kCapacity) {
        spare_.push_back(h);
        return;
      }
    }
    delete h;
  }

 private:
  static constexpr size_t kCapacity = 4096;
  std::mutex mutex_;
  std::vector<runrun_handle*> spare_;
};

HandleFreeList& handle_free_list() {
  static auto* list = new HandleFreeList;
  return *list;
}

void give(std::shared_ptr<runrun::Handle> handle, runrun_handle** out) {
  *out = handle_free_list().take(std::move(handle));
}

// Outputs the runtime allocates for NULL outputs of allreduce/broadcast (c_api.h): each is
// enqueued as the op's output and handed to the handle (take_output_at(index)) before the
// caller sees the handle.
struct AllocatedOutputs {
  std::vector<std::pair<size_t, runrun::OwnedTensor>> outputs;

  // The output view for tensor `index` into `into`: `output` itself, or a new one like `input`.
  void output_into(runrun::OpType op, const char* name, int rank, size_t index,
                   const runrun::TensorView& input, const DLTensor* output, const char* api_op,
                   runrun::TensorView& into) {
    if (output != nullptr) return view_into(api_op, name, rank, output, "output", into);
    outputs.emplace_back(index, runrun::allocate_output_like(op, name_of(name), rank, input));
    into = outputs.back().second.view();
  }
  runrun::TensorView output(runrun::OpType op, const char* name, int rank, size_t index,
                            const runrun::TensorView& input, const DLTensor* output,
                            const char* api_op) {
    runrun::TensorView result;
    output_into(op, name, rank, index, input, output, api_op, result);
    return result;
  }
  void hand_to(runrun::Handle& handle) {
    for (auto& [index, tensor] : outputs) handle.set_output(index, std::move(tensor));
  }
};

// A recycled entry (Runtime::blank_entry) filled in place with allreduce member `index`'s name,
// input and output: one op per gradient allocates no name, shape or entry (issue 12, point 6).
std::unique_ptr<runrun::TensorEntry> allreduce_entry(runrun::Runtime& r, int rank,
                                                     const char* name, const DLTensor* input,
                                                     const DLTensor* output, size_t index,
                                                     AllocatedOutputs& allocated) {
  std::unique_ptr<runrun::TensorEntry> entry = r.blank_entry();
  entry->request.name.assign(name ? name : "");
  view_into("allreduce", name, rank, input, "input", entry->input);
  allocated.output_into(runrun::OpType::kAllreduce, name, rank, index, entry->input, output,
                        "allreduce", entry->output);
  return entry;
}


}  // namespace

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
      options.logger = runrun::make_rank_logger(place.rank, size ? std::atoi(size) : -1,
                                                config.log_level);
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

runrun_allreduce_options runrun_allreduce_default_options(void) {
  return runrun_allreduce_options{RUNRUN_OP_AVERAGE, 1.0, 1.0, 0};
}

runrun_status runrun_allreduce(runrun_runtime* rt, const char* name, const DLTensor* input,
                               const DLTensor* output, const runrun_allreduce_options* options,
                               runrun_handle** out) {
  return guarded([&] {
    require(out != nullptr, "runrun_allreduce: out is null");
    runrun::Runtime& r = runtime_of(rt);
    AllocatedOutputs allocated;
    std::shared_ptr<runrun::Handle> handle = r.allreduce(
        allreduce_entry(r, r.topology().rank, name, input, output, 0, allocated),
        options_of(options));
    allocated.hand_to(*handle);
    give(std::move(handle), out);
  });
}

runrun_status runrun_grouped_allreduce(runrun_runtime* rt, const char* const* names,
                                       const DLTensor* const* inputs,
                                       const DLTensor* const* outputs, size_t n,
                                       const runrun_allreduce_options* options,
                                       runrun_handle** out) {
  return guarded([&] {
    require(out && names && inputs, "runrun_grouped_allreduce: null argument");
    runrun::Runtime& r = runtime_of(rt);
    const int rank = r.topology().rank;
    std::vector<std::unique_ptr<runrun::TensorEntry>> entries;
    entries.reserve(n);
    AllocatedOutputs allocated;
    for (size_t i = 0; i < n; ++i) {
      entries.push_back(allreduce_entry(r, rank, names[i], inputs[i],
                                        outputs ? outputs[i] : nullptr, i, allocated));
    }
    std::shared_ptr<runrun::Handle> handle =
        r.grouped_allreduce(std::move(entries), options_of(options));
    allocated.hand_to(*handle);
    give(std::move(handle), out);
  });
}

runrun_status runrun_allgather(runrun_runtime* rt, const char* name, const DLTensor* input,
                               int32_t process_set, runrun_handle** out) {
  return runrun_grouped_allgather(rt, &name, &input, 1, process_set, out);
}

runrun_status runrun_grouped_allgather(runrun_runtime* rt, const char* const* names,
                                       const DLTensor* const* inputs, size_t n,
                                       int32_t process_set, runrun_handle** out) {
  return guarded([&] {
    require(out && names && inputs, "runrun_grouped_allgather: null argument");
    runrun::Runtime& r = runtime_of(rt);
    GroupArgs args = group_args("allgather", r.topology().rank, names, inputs, n);
    give(r.allgather(args.names, args.inputs, process_set), out);
  });
}

runrun_status runrun_broadcast(runrun_runtime* rt, const char* name, const DLTensor* input,
                               const DLTensor* output, int32_t root_rank, int32_t process_set,
                               runrun_handle** out) {
  return guarded([&] {
    require(out != nullptr, "runrun_broadcast: out is null");
    runrun::Runtime& r = runtime_of(rt);
    int rank = r.topology().rank;
    runrun::TensorView in = view("broadcast", name, rank, input, "input");
    AllocatedOutputs allocated;
    runrun::TensorView result =
        allocated.output(runrun::OpType::kBroadcast, name, rank, 0, in, output, "broadcast");
    std::shared_ptr<runrun::Handle> handle =
        r.broadcast(name_of(name), in, result, root_rank, process_set);
    allocated.hand_to(*handle);
    give(std::move(handle), out);
  });
}

runrun_status runrun_barrier(runrun_runtime* rt, int32_t process_set, runrun_handle** out) {
  return guarded([&] {
    require(out != nullptr, "runrun_barrier: out is null");
    give(runtime_of(rt).barrier(process_set), out);
  });
}

runrun_status runrun_alltoall(runrun_runtime* rt, const char* name, const DLTensor* input,
                              const int64_t* splits, size_t num_splits, int32_t process_set,
                              runrun_handle** out) {
  return guarded([&] {
    require(out != nullptr, "runrun_alltoall: out is null");
    runrun::Runtime& r = runtime_of(rt);
    std::vector<int64_t> s;
    if (splits) s.assign(splits, splits + num_splits);
    give(r.alltoall(name_of(name), view("alltoall", name, r.topology().rank, input, "input"), s,
                    process_set),
         out);
  });
}

runrun_status runrun_reducescatter(runrun_runtime* rt, const char* name, const DLTensor* input,
                                   const runrun_allreduce_options* options, runrun_handle** out) {
  return runrun_grouped_reducescatter(rt, &name, &input, 1, options, out);
}

runrun_status runrun_grouped_reducescatter(runrun_runtime* rt, const char* const* names,
                                           const DLTensor* const* inputs, size_t n,
                                           const runrun_allreduce_options* options,
                                           runrun_handle** out) {
  return guarded([&] {
    require(out && names && inputs, "runrun_grouped_reducescatter: null argument");
    runrun::Runtime& r = runtime_of(rt);
    GroupArgs args = group_args("reducescatter", r.topology().rank, names, inputs, n);
    give(r.reducescatter(args.names, args.inputs, options_of(options)), out);
  });
}

runrun_status runrun_join(runrun_runtime* rt, int32_t process_set, runrun_handle** out) {
  return guarded([&] {
    require(out != nullptr, "runrun_join: out is null");
    give(runtime_of(rt).join(process_set), out);
  });
}

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

runrun_status runrun_handle_poll(runrun_handle* h) {
  if (!h) return RUNRUN_INVALID_ARGUMENT;
  if (stranded_by_fork(h)) return RUNRUN_UNSUPPORTED;
  if (!h->handle->done()) return RUNRUN_IN_PROGRESS;
  return to_status(h->handle->code());
}

runrun_status runrun_handle_wait(runrun_handle* h, double timeout_seconds) {
  if (!h) return RUNRUN_INVALID_ARGUMENT;
  if (stranded_by_fork(h)) return RUNRUN_UNSUPPORTED;
  bool unlimited = timeout_seconds < 0 || !std::isfinite(timeout_seconds);  // NaN, inf: no limit
  bool done = unlimited
                  ? h->handle->wait()
                  : h->handle->wait(std::chrono::duration<double>(timeout_seconds));
  if (!done) return RUNRUN_IN_PROGRESS;
  return to_status(h->handle->code());
}

const char* runrun_handle_error(runrun_handle* h) {
  if (!h) return "";
  if (!stranded_by_fork(h)) h->error = h->handle->error();
  return h->error.c_str();
}

runrun_status runrun_handle_take_output(runrun_handle* h, DLManagedTensor** out) {
  return runrun_handle_take_output_at(h, 0, out);
}

runrun_status runrun_handle_take_output_at(runrun_handle* h, size_t index, DLManagedTensor** out) {
  return guarded([&] {
    require(h && out, "runrun_handle_take_output: null argument");
    std::optional<runrun::OwnedTensor> tensor = h->handle->take_output(index);
    require(tensor.has_value(),
            "no output to take: the op has not completed, failed, allocates no output, or it was "
            "taken already");
    *out = runrun::to_dlpack(std::move(*tensor));
  });
}

runrun_status runrun_handle_received_splits(runrun_handle* h, const int64_t** splits,
                                            size_t* count) {
  return guarded([&] {
    require(h && splits && count, "runrun_handle_received_splits: null argument");
    h->splits = h->handle->received_splits();
    *splits = h->splits.data();
    *count = h->splits.size();
  });
}

runrun_status runrun_handle_join_result(runrun_handle* h, int32_t* last_rank) {
  return guarded([&] {
    require(h && last_rank, "runrun_handle_join_result: null argument");
    *last_rank = static_cast<int32_t>(h->handle->result());
  });
}

void runrun_handle_release(runrun_handle* h) {
  // A handle of the parent's op is left alone in a forked child: the free list's lock may have
  // been held by a thread that did not come along.
  if (h != nullptr && !runrun::forked_since(h->made_in)) handle_free_list().give_back(h);
}

}  // extern "C"
