#include "core/runtime/runtime.h"

#include <algorithm>

#include "common/rank_events.h"
#include "core/api/enqueue_checks.h"
#include "core/runtime/thread_placement.h"
#include "ops/backend_factory.h"

namespace runrun {
namespace {

// A step of init() that only this rank can fail (a setting it refuses; core/api/init_checks.h
// catches these before the transport where the rank's place is known): its failure tells the
// launcher that this rank failed in init(), so that the launcher names it, not a peer.
template <typename Step>
auto own_init_step(int rank, Step step) {
  try {
    return step();
  } catch (...) {
    report_init_failure(rank);
    throw;
  }
}

}  // namespace

Runtime::Runtime(std::unique_ptr<Backend> backend, Config config)
    : Runtime(transport_over(std::move(backend)), std::move(config)) {}

// A failure here leaves the peers inside init() (waiting in the address exchange): this rank
// must not wait for them in the transport's finalize at exit (MPI_Finalize would, for as long
// as their RUNRUN_PEER_TIMEOUT), so that it exits at once and its launcher stops the job.
Runtime::Runtime(Transport transport, Config config) try
    : config_(std::move(config)),
      topology_(transport.data->topology()),
      backend_name_(transport.data->name()),
      background_cpu_(own_init_step(
          topology_.rank, [this] { return background_cpu(config_.thread_affinity, topology_); })),
      logger_(make_rank_logger(topology_.rank, topology_.size, config_.log_level)),
      timeline_(logger_),
      registry_(topology_.rank, topology_.size),
      health_(config_, topology_, logger_, registry_) {
  // RUNRUN_TIMELINE names one file: the coordinator (rank 0) writes it, as it sees every
  // negotiation; other ranks start their own timelines through the API.
  if (!config_.timeline_path.empty() && topology_.rank == 0) {
    own_init_step(topology_.rank, [this] {
      timeline_.start(config_.timeline_path, topology_.rank, config_.timeline_mark_cycles);
    });
  }
  logger_->info("runrun started: backend {}, rank {}/{}, local {}/{}, cross {}/{}", backend_name_,
                topology_.rank, topology_.size, topology_.local_rank, topology_.local_size,
                topology_.cross_rank, topology_.cross_size);
  // A collective step over the global control channel: before any worker drives the transport.
  health_.start(*transport.control);
  registry_.set_global_worker(std::make_shared<ProcessSetWorker>(
      0, std::move(transport), config_, logger_, &timeline_, background_cpu_, entry_pool_));
} catch (...) {
  skip_transport_finalize();
  throw;
}

Runtime::~Runtime() { shutdown(); }

void Runtime::shutdown() {
  shut_down_ = true;
  health_.begin_shutdown();
  std::vector<std::shared_ptr<ProcessSetWorker>> workers = registry_.workers();
  std::reverse(workers.begin(), workers.end());
  // One deadline for every set: the whole shutdown takes RUNRUN_SHUTDOWN_TIMEOUT at most.
  const auto deadline = std::chrono::steady_clock::now() + config_.shutdown_timeout;
  bool clean = true;
  for (auto& worker : workers) {  // added sets first, the global set last
    worker->shutdown("", deadline);
    clean = clean && worker->stopped_cleanly();
  }
  health_.stop();  // says goodbye: peers do not take it for a loss
  if (!clean && !leaving_uncleanly_.exchange(true)) {
    // Some peer may be stuck mid-collective or never shut down: a transport's exit-time
    // finalization (MPI_Finalize) would wait for it forever. Leave without it; the launcher
    // stops the peers that remain once this process exits.
    logger_->warn(
        "leaving without finalizing the transport: not every rank took part in the "
        "shutdown (an error, a lost or stalled peer, or RUNRUN_SHUTDOWN_TIMEOUT={} s "
        "passed)",
        config_.shutdown_timeout.count());
    skip_transport_finalize();
  }
  timeline_.stop();  // valid JSON on every shutdown path, errors included
}

bool Runtime::running() const {
  if (shut_down_) return false;
  return worker_ptr(0)->running();
}

ProcessSetWorker& Runtime::worker(int32_t process_set) const { return *worker_ptr(process_set); }

std::shared_ptr<Handle> Runtime::submit(std::vector<std::unique_ptr<TensorEntry>> entries,
                                        int32_t process_set) {
  std::shared_ptr<Handle> handle = entries.front()->handle;
  worker_ptr(process_set)->enqueue(std::move(entries));
  return handle;
}

std::shared_ptr<Handle> Runtime::submit(std::unique_ptr<TensorEntry> entry, int32_t process_set) {
  std::shared_ptr<Handle> handle = entry->handle;
  worker_ptr(process_set)->enqueue(std::move(entry));
  return handle;
}

std::shared_ptr<Handle> Runtime::submit_without_tensor(
    Request request, int32_t process_set, std::function<void(Transport&, Handle&)> action) {
  auto handle = std::make_shared<Handle>();
  const TensorView none{nullptr, DataType::kUInt8, {0}};
  std::vector<std::unique_ptr<TensorEntry>> entries;
  entries.push_back(make_entry(std::move(request), none, none, handle, 0));
  entries.back()->action = std::move(action);
  return submit(std::move(entries), process_set);
}

void Runtime::prepare_allreduce(TensorEntry& entry, const AllreduceOptions& options) const {
  const int rank = topology_.rank;
  Request& r = entry.request;
  check_tensor(OpType::kAllreduce, r.name, rank, entry.input, "input");
  check_tensor(OpType::kAllreduce, r.name, rank, entry.output, "output");
  check_same_layout(OpType::kAllreduce, r.name, rank, entry.input, entry.output);
  check_reduction(OpType::kAllreduce, r.name, rank, entry.input.dtype, options);
  if (options.op == ReduceOp::kAdasum) {
    check_adasum(r.name, rank, entry.input, worker_ptr(options.process_set)->backend().size());
  }
  r.op = OpType::kAllreduce;
  r.reduce_op = options.op;
  r.prescale = options.prescale;
  r.postscale = options.postscale;
}

std::shared_ptr<Handle> Runtime::allreduce(std::string name, TensorView input, TensorView output,
                                           const AllreduceOptions& options) {
  std::unique_ptr<TensorEntry> entry = blank_entry();
  entry->request.name = std::move(name);
  entry->input = std::move(input);
  entry->output = std::move(output);
  return allreduce(std::move(entry), options);
}

std::shared_ptr<Handle> Runtime::allreduce(std::unique_ptr<TensorEntry> entry,
                                           const AllreduceOptions& options) {
  prepare_allreduce(*entry, options);
  complete_entry(*entry, std::make_shared<Handle>(), 0);
  return submit(std::move(entry), options.process_set);
}

std::shared_ptr<Handle> Runtime::grouped_allreduce(const std::vector<std::string>& names,
                                                   const std::vector<TensorView>& inputs,
                                                   const std::vector<TensorView>& outputs,
                                                   const AllreduceOptions& options) {
  RUNRUN_ENFORCE(names.size() == inputs.size() && names.size() == outputs.size(),
                 InvalidArgumentError,
                 "grouped allreduce on rank " + std::to_string(topology_.rank) +
                     ": needs as many names, inputs and outputs (at least one each)");
  std::vector<std::unique_ptr<TensorEntry>> entries;
  entries.reserve(names.size());
  for (size_t i = 0; i < names.size(); ++i) {
    entries.push_back(blank_entry());
    entries.back()->request.name = names[i];
    entries.back()->input = inputs[i];
    entries.back()->output = outputs[i];
  }
  return grouped_allreduce(std::move(entries), options);
}

std::shared_ptr<Handle> Runtime::grouped_allreduce(
    std::vector<std::unique_ptr<TensorEntry>> entries, const AllreduceOptions& options) {
  RUNRUN_ENFORCE(!entries.empty(), InvalidArgumentError,
                 "grouped allreduce on rank " + std::to_string(topology_.rank) +
                     ": needs as many names, inputs and outputs (at least one each)");
  auto handle = std::make_shared<Handle>(entries.size());
  const std::string& first_name = entries.front()->request.name;
  for (size_t i = 0; i < entries.size(); ++i) {
    prepare_allreduce(*entries[i], options);
    tag_group(entries[i]->request, first_name, entries.size());
    complete_entry(*entries[i], handle, i);
  }
  return submit(std::move(entries), options.process_set);
}

std::shared_ptr<Handle> Runtime::allgather(const std::vector<std::string>& names,
                                           const std::vector<TensorView>& inputs,
                                           int32_t process_set) {
  const int rank = topology_.rank;
  RUNRUN_ENFORCE(!names.empty() && names.size() == inputs.size(), InvalidArgumentError,
                 "allgather on rank " + std::to_string(rank) +
                     ": needs as many names as inputs (at least one)");
  auto handle = std::make_shared<Handle>(names.size());
  std::vector<std::unique_ptr<TensorEntry>> entries;
  for (size_t i = 0; i < names.size(); ++i) {
    check_tensor(OpType::kAllgather, names[i], rank, inputs[i], "input");
    check_has_rows(OpType::kAllgather, names[i], rank, inputs[i]);
    Request r;
    r.name = names[i];
    tag_group(r, names.front(), names.size());
    r.op = OpType::kAllgather;
    entries.push_back(make_entry(std::move(r), inputs[i], TensorView{}, handle, i));
  }
  return submit(std::move(entries), process_set);
}

std::shared_ptr<Handle> Runtime::broadcast(const std::string& name, const TensorView& input,
                                           const TensorView& output, int32_t root,
                                           int32_t process_set) {
  const int rank = topology_.rank;
  check_tensor(OpType::kBroadcast, name, rank, input, "input");
  check_tensor(OpType::kBroadcast, name, rank, output, "output");
  check_same_layout(OpType::kBroadcast, name, rank, input, output);
  // root_rank is a global rank; inside a process set the backend numbers members 0..n-1.
  std::vector<int> members = process_set_ranks(process_set);
  auto member = std::find(members.begin(), members.end(), root);
  std::vector<int64_t> members64(members.begin(), members.end());
  RUNRUN_ENFORCE(member != members.end(), InvalidArgumentError,
                 where(OpType::kBroadcast, name, rank) + ": root rank " + std::to_string(root) +
                     " is outside the process set (ranks " + shape_string(members64) + ")");
  root = static_cast<int32_t>(member - members.begin());
  auto handle = std::make_shared<Handle>();
  Request r;
  r.name = name;
  r.op = OpType::kBroadcast;
  r.root = root;
  std::vector<std::unique_ptr<TensorEntry>> entries;
  entries.push_back(make_entry(std::move(r), input, output, handle, 0));
  return submit(std::move(entries), process_set);
}

std::shared_ptr<Handle> Runtime::alltoall(const std::string& name, const TensorView& input,
                                          const std::vector<int64_t>& splits, int32_t process_set) {
  const int rank = topology_.rank;
  check_tensor(OpType::kAlltoall, name, rank, input, "input");
  check_has_rows(OpType::kAlltoall, name, rank, input);
  const int set_size = worker_ptr(process_set)->backend().size();
  const int64_t rows = input.shape[0];
  std::vector<int64_t> actual = splits;
  if (actual.empty()) {
    RUNRUN_ENFORCE(rows % set_size == 0, InvalidArgumentError,
                   where(OpType::kAlltoall, name, rank) + ": the first dimension (" +
                       std::to_string(rows) + ") does not divide by the " +
                       std::to_string(set_size) + " ranks; pass splits");
    actual.assign(static_cast<size_t>(set_size), rows / set_size);
  }
  RUNRUN_ENFORCE(actual.size() == static_cast<size_t>(set_size), InvalidArgumentError,
                 where(OpType::kAlltoall, name, rank) + ": got " + std::to_string(actual.size()) +
                     " splits for " + std::to_string(set_size) + " ranks; pass one per rank");
  int64_t total = 0;
  for (int64_t s : actual) {
    RUNRUN_ENFORCE(s >= 0, InvalidArgumentError,
                   where(OpType::kAlltoall, name, rank) + ": negative split " + std::to_string(s));
    total += s;
  }
  RUNRUN_ENFORCE(total == rows, InvalidArgumentError,
                 where(OpType::kAlltoall, name, rank) + ": the splits " + shape_string(actual) +
                     " add up to " + std::to_string(total) + " but the first dimension is " +
                     std::to_string(rows));
  auto handle = std::make_shared<Handle>();
  Request r;
  r.name = name;
  r.op = OpType::kAlltoall;
  r.splits = actual;
  std::vector<std::unique_ptr<TensorEntry>> entries;
  entries.push_back(make_entry(std::move(r), input, TensorView{}, handle, 0));
  return submit(std::move(entries), process_set);
}

std::shared_ptr<Handle> Runtime::reducescatter(const std::vector<std::string>& names,
                                               const std::vector<TensorView>& inputs,
                                               const AllreduceOptions& options) {
  const int rank = topology_.rank;
  RUNRUN_ENFORCE(!names.empty() && names.size() == inputs.size(), InvalidArgumentError,
                 "reducescatter on rank " + std::to_string(rank) +
                     ": needs as many names as inputs (at least one)");
  auto handle = std::make_shared<Handle>(names.size());
  std::vector<std::unique_ptr<TensorEntry>> entries;
  for (size_t i = 0; i < names.size(); ++i) {
    check_tensor(OpType::kReducescatter, names[i], rank, inputs[i], "input");
    check_has_rows(OpType::kReducescatter, names[i], rank, inputs[i]);
    RUNRUN_ENFORCE(
        options.op == ReduceOp::kSum || options.op == ReduceOp::kAverage, InvalidArgumentError,
        where(OpType::kReducescatter, names[i], rank) + ": op " +
            std::string(reduce_op_name(options.op)) + " is not supported; use sum or average");
    check_reduction(OpType::kReducescatter, names[i], rank, inputs[i].dtype, options);
    Request r;
    r.name = names[i];
    tag_group(r, names.front(), names.size());
    r.op = OpType::kReducescatter;
    r.reduce_op = options.op;
    r.prescale = options.prescale;
    r.postscale = options.postscale;
    entries.push_back(make_entry(std::move(r), inputs[i], TensorView{}, handle, i));
  }
  return submit(std::move(entries), options.process_set);
}

std::shared_ptr<Handle> Runtime::barrier(int32_t process_set) {
  Request r;
  r.name = std::string(kReservedPrefix) + "barrier." + std::to_string(process_set) + "." +
           std::to_string(worker_ptr(process_set)->next_sequence());
  r.op = OpType::kBarrier;
  return submit_without_tensor(std::move(r), process_set);
}

}  // namespace runrun
