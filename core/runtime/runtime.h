#pragma once
// Why: one rank's runtime, and the façade the C API enqueues through. It owns the config,
// logger and timeline, the process sets (ProcessSetRegistry: every set's ranks, and the
// background worker with its backend for each set this rank is in) and the peer health
// bookkeeping (PeerHealth: the peer monitor and what lost, departed or idle peers mean). No
// process globals: several runtimes can live in one process (the unit tests run N ranks as
// threads, each with its own Runtime).
// Every enqueue validates what it can locally (tensor, dtype, root, duplicate name) and throws
// InvalidArgumentError at once, with nothing enqueued; everything else fails the handle.
// Thread-safety: every public method may be called from any thread concurrently. Runtime's own
// mutable state is atomics; the registry, the peer health and the timeline each keep their own
// contract (see their headers).

#include <atomic>
#include <functional>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/logging.h"
#include "core/runtime/config.h"
#include "core/runtime/entry_pool.h"
#include "core/runtime/handle.h"
#include "core/health/peer_health.h"
#include "core/runtime/process_set_registry.h"
#include "core/runtime/process_set_worker.h"
#include "core/runtime/tensor.h"
#include "core/timeline/timeline.h"
#include "ops/backend.h"

namespace runrun {

struct AllreduceOptions {
  ReduceOp op = ReduceOp::kAverage;
  double prescale = 1.0;
  double postscale = 1.0;
  int32_t process_set = 0;
};

class Runtime {
 public:
  Runtime(std::unique_ptr<Backend> backend, Config config);
  // Negotiation over transport.control, data over transport.data (same group of ranks).
  Runtime(Transport transport, Config config);
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  const Topology& topology() const { return topology_; }
  std::string_view backend_name() const { return backend_name_; }
  const Config& config() const { return config_; }
  const Logger& logger() const { return logger_; }

  // By value: the temporaries move into the enqueued entry (no copies per tensor).
  std::shared_ptr<Handle> allreduce(std::string name, TensorView input, TensorView output,
                                    const AllreduceOptions& options);
  std::shared_ptr<Handle> grouped_allreduce(const std::vector<std::string>& names,
                                            const std::vector<TensorView>& inputs,
                                            const std::vector<TensorView>& outputs,
                                            const AllreduceOptions& options);
  // The per-tensor path of the C API: a blank entry from this runtime's pool
  // (core/runtime/entry_pool.h), whose buffers keep an earlier op's capacity. The caller sets
  // request.name, input and output in place and hands it (or a group of them) back below, which
  // checks them as the overloads above do. Any thread.
  std::unique_ptr<TensorEntry> blank_entry() { return entry_pool_->take(); }
  std::shared_ptr<Handle> allreduce(std::unique_ptr<TensorEntry> entry,
                                    const AllreduceOptions& options);
  std::shared_ptr<Handle> grouped_allreduce(std::vector<std::unique_ptr<TensorEntry>> entries,
                                            const AllreduceOptions& options);
  // Output allocated by the runtime: Handle::take_output(i).
  std::shared_ptr<Handle> allgather(const std::vector<std::string>& names,
                                    const std::vector<TensorView>& inputs, int32_t process_set);
  std::shared_ptr<Handle> broadcast(const std::string& name, const TensorView& input,
                                    const TensorView& output, int32_t root, int32_t process_set);
  // splits empty: equal splits. Output allocated; Handle::received_splits().
  std::shared_ptr<Handle> alltoall(const std::string& name, const TensorView& input,
                                   const std::vector<int64_t>& splits, int32_t process_set);
  std::shared_ptr<Handle> reducescatter(const std::vector<std::string>& names,
                                        const std::vector<TensorView>& inputs,
                                        const AllreduceOptions& options);
  std::shared_ptr<Handle> barrier(int32_t process_set);
  // Uneven data: this rank has no more batches. Completes when every rank of the set joined;
  // Handle::result() is the last rank to join. Meanwhile this rank contributes zeros to the
  // allreduces of the others.
  std::shared_ptr<Handle> join(int32_t process_set);

  // Collective over every rank (each passes the same sorted global ranks): registers a process
  // set and returns its id (> 0) on members and non-members alike. Blocks until done.
  int32_t add_process_set(const std::vector<int>& ranks);
  // Collective over every rank; fails the set's pending ops. The global set 0 stays.
  void remove_process_set(int32_t id);
  // Global ranks of set `id`; throws InvalidArgumentError for an unknown id.
  std::vector<int> process_set_ranks(int32_t id) const;
  // This rank's rank within set `id`, or -1 when it is not a member or the set is unknown.
  int process_set_rank(int32_t id) const;

  // Chrome-trace timeline of this rank (see docs/timeline.md); start replaces a running one.
  void start_timeline(const std::string& path, bool mark_cycles) {
    timeline_.start(path, topology_.rank, mark_cycles);
  }
  void stop_timeline() { timeline_.stop(); }

  // For tests: make this rank look hung to its peers' monitors.
  void freeze_peer_monitor_for_test() { health_.freeze_for_test(); }

  // Stops every worker (see ProcessSetWorker::shutdown); pending and later ops fail with
  // ShutDownError. Takes RUNRUN_SHUTDOWN_TIMEOUT at most, whatever the peers do; when not every
  // rank took part, the transport is not finalized at exit, so the process exits at once.
  // Idempotent.
  void shutdown();
  bool running() const;

  // Throws InvalidArgumentError for an unknown set or one this rank is not a member of.
  ProcessSetWorker& worker(int32_t process_set) const;

 private:
  // Checks one allreduce member (request.name, input, output) on the calling thread and sets
  // its request's op and options (no group tag, not completed).
  void prepare_allreduce(TensorEntry& entry, const AllreduceOptions& options) const;
  std::shared_ptr<Handle> submit(std::vector<std::unique_ptr<TensorEntry>> entries,
                                 int32_t process_set);
  std::shared_ptr<Handle> submit(std::unique_ptr<TensorEntry> entry, int32_t process_set);
  std::shared_ptr<ProcessSetWorker> worker_ptr(int32_t process_set) const {
    return registry_.worker(process_set);
  }
  // Enqueues an op that moves no tensor (barrier, join, process-set changes). `action`, when
  // given, runs on the set's background thread once every rank agreed.
  std::shared_ptr<Handle> submit_without_tensor(
      Request request, int32_t process_set,
      std::function<void(Transport&, Handle&)> action = nullptr);

  Config config_;
  Topology topology_;
  std::string backend_name_;
  int background_cpu_;  // RUNRUN_THREAD_AFFINITY's CPU of this rank's workers; -1: not pinned
  Logger logger_;
  Timeline timeline_;  // declared before the workers, which use it: destroyed after them
  // Finished entries for blank_entry(), given back by every process set's worker.
  std::shared_ptr<EntryPool> entry_pool_ = std::make_shared<EntryPool>();
  ProcessSetRegistry registry_;  // its workers use the timeline: declared after it
  PeerHealth health_;  // uses the registry from the monitor thread: declared (and stopped) after
  std::atomic<uint64_t> control_op_count_{0};
  std::atomic<bool> shut_down_{false};
  std::atomic<bool> leaving_uncleanly_{false};  // the transport will not be finalized at exit
};

}  // namespace runrun
