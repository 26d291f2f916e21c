#pragma once
// Why: the object that owns everything of one rank's runtime — config, logger, the backend of
// every process set and its background worker. No process globals: several runtimes can live
// in one process (the unit tests run N ranks as threads, each with its own Runtime).
// Every enqueue validates what it can locally (tensor, dtype, root, duplicate name) and throws
// InvalidArgumentError at once, with nothing enqueued; everything else fails the handle.
// Thread-safety: every public method may be called from any thread concurrently.

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/common/logging.h"
#include "core/config.h"
#include "core/handle.h"
#include "core/process_set_worker.h"
#include "core/tensor.h"
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
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  const Topology& topology() const { return topology_; }
  std::string_view backend_name() const { return backend_name_; }
  const Config& config() const { return config_; }
  const Logger& logger() const { return logger_; }

  std::shared_ptr<Handle> allreduce(const std::string& name, const TensorView& input,
                                    const TensorView& output, const AllreduceOptions& options);
  std::shared_ptr<Handle> grouped_allreduce(const std::vector<std::string>& names,
                                            const std::vector<TensorView>& inputs,
                                            const std::vector<TensorView>& outputs,
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

  // Stops every worker (see ProcessSetWorker::shutdown); pending and later ops fail with
  // ShutDownError. Idempotent.
  void shutdown();
  bool running() const;

  ProcessSetWorker& worker(int32_t process_set) const;

 private:
  std::shared_ptr<Handle> submit(std::vector<std::unique_ptr<TensorEntry>> entries,
                                 int32_t process_set);

  Config config_;
  Topology topology_;
  std::string backend_name_;
  Logger logger_;
  mutable std::mutex workers_mutex_;
  std::map<int32_t, std::unique_ptr<ProcessSetWorker>> workers_;
  std::atomic<uint64_t> barrier_count_{0};
  std::atomic<bool> shut_down_{false};
};

}  // namespace runrun
