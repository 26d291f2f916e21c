#include "core/runtime.h"

#include "core/wire.h"
#include "ops/backend_factory.h"

#include <algorithm>
#include <numeric>
#include <random>

namespace runrun {
namespace {

// Prefix of the names of runrun's own ops; user tensor names may not start with it.
constexpr const char* kReservedPrefix = "__runrun.";

std::string where(OpType op, const std::string& name, int rank) {
  return std::string(op_type_name(op)) + " of tensor '" + name + "' on rank " +
         std::to_string(rank);
}

void check_tensor(OpType op, const std::string& name, int rank, const TensorView& t,
                  const char* role) {
  RUNRUN_ENFORCE(!name.empty(), InvalidArgumentError,
                 std::string(op_type_name(op)) + " on rank " + std::to_string(rank) +
                     ": the tensor name is empty; give every op a name unique among the ops in "
                     "flight");
  RUNRUN_ENFORCE(name.rfind(kReservedPrefix, 0) != 0, InvalidArgumentError,
                 where(op, name, rank) + ": names starting with '" + kReservedPrefix +
                     "' are reserved for runrun's own ops (barrier, join, process sets); "
                     "choose another name");
  for (int64_t d : t.shape) {
    RUNRUN_ENFORCE(d >= 0, InvalidArgumentError,
                   where(op, name, rank) + ": the " + role + " has a negative dimension " +
                       shape_string(t.shape));
  }
  RUNRUN_ENFORCE(t.data != nullptr || t.num_bytes() == 0, InvalidArgumentError,
                 where(op, name, rank) + ": the " + role + " is a null pointer with " +
                     std::to_string(t.num_bytes()) + " bytes; pass an allocated tensor");
}

void check_same_layout(OpType op, const std::string& name, int rank, const TensorView& in,
                       const TensorView& out) {
  RUNRUN_ENFORCE(in.dtype == out.dtype && in.shape == out.shape, InvalidArgumentError,
                 where(op, name, rank) + ": the output (" + std::string(data_type_name(out.dtype)) +
                     " " + shape_string(out.shape) + ") must have the input's dtype and shape (" +
                     std::string(data_type_name(in.dtype)) + " " + shape_string(in.shape) + ")");
}

void check_reduction(OpType op, const std::string& name, int rank, DataType dtype,
                     const AllreduceOptions& o) {
  if (dtype != DataType::kBool) return;
  RUNRUN_ENFORCE(o.op != ReduceOp::kAverage, InvalidArgumentError,
                 where(op, name, rank) + ": average is not defined for bool tensors; use sum "
                                         "(logical or), min/product (and) or max (or)");
  RUNRUN_ENFORCE(o.prescale == 1.0 && o.postscale == 1.0, InvalidArgumentError,
                 where(op, name, rank) + ": scale factors cannot apply to bool tensors");
}

void check_has_rows(OpType op, const std::string& name, int rank, const TensorView& t) {
  RUNRUN_ENFORCE(!t.shape.empty(), InvalidArgumentError,
                 where(op, name, rank) + ": needs a tensor with at least one dimension (got a "
                                         "scalar); reshape it to [1]");
}

// Members of a grouped op (more than one tensor in one call) are negotiated as one unit.
void tag_group(Request& request, const std::vector<std::string>& names) {
  if (names.size() < 2) return;
  request.group = "group:" + names.front() + ":" + std::to_string(names.size());
  request.group_size = static_cast<int32_t>(names.size());
}

std::unique_ptr<TensorEntry> make_entry(Request request, const TensorView& in,
                                        const TensorView& out, std::shared_ptr<Handle> handle,
                                        size_t index) {
  auto entry = std::make_unique<TensorEntry>();
  request.dtype = in.dtype;
  request.shape = in.shape;
  entry->request = std::move(request);
  entry->input = in;
  entry->output = out;
  entry->handle = std::move(handle);
  entry->handle_index = index;
  entry->enqueued_at = std::chrono::steady_clock::now();
  return entry;
}

}  // namespace

Runtime::Runtime(std::unique_ptr<Backend> backend, Config config)
    : config_(std::move(config)),
      topology_(backend->topology()),
      backend_name_(backend->name()),
      logger_(make_rank_logger(topology_.rank, topology_.size, config_.log_level)),
      timeline_(logger_) {
  // RUNRUN_TIMELINE names one file: the coordinator (rank 0) writes it, as it sees every
  // negotiation; other ranks start their own timelines through the API.
  if (!config_.timeline_path.empty() && topology_.rank == 0) {
    timeline_.start(config_.timeline_path, topology_.rank);
  }
  logger_->info("runrun started: backend {}, rank {}/{}, local {}/{}, cross {}/{}", backend_name_,
                topology_.rank, topology_.size, topology_.local_rank, topology_.local_size,
                topology_.cross_rank, topology_.cross_size);
  std::vector<int> everyone(static_cast<size_t>(topology_.size));
  std::iota(everyone.begin(), everyone.end(), 0);
  process_sets_[0] = everyone;
  start_peer_monitor(*backend);
  workers_[0] = std::make_shared<ProcessSetWorker>(0, std::move(backend), config_, logger_,
                                                &timeline_);
}

Runtime::~Runtime() { shutdown(); }

void Runtime::start_peer_monitor(Backend& global) {
  if (config_.peer_timeout.count() == 0 || topology_.size < 2) return;
  auto interval = std::min<std::chrono::milliseconds>(std::chrono::milliseconds(1000),
                                                      config_.peer_timeout / 4);
  peer_monitor_ = std::make_unique<PeerMonitor>(topology_.rank, topology_.size, interval,
                                                config_.peer_timeout, logger_);
  ControlChannel& control = global.control();
  std::vector<std::string> gathered = control.gather(peer_monitor_->address(), 0);
  std::string table;
  if (topology_.rank == 0) {
    WireWriter w;
    w.i64(static_cast<int64_t>(std::random_device{}()) << 32 | std::random_device{}());
    for (const std::string& address : gathered) w.str(address);
    table = w.take();
  }
  control.broadcast(table, 0);
  WireReader reader(table);
  auto job_key = static_cast<uint64_t>(reader.i64());
  std::vector<std::string> addresses;
  for (int r = 0; r < topology_.size; ++r) addresses.push_back(reader.str());
  peer_monitor_->set_waiting_probe([this] {
    std::shared_ptr<ProcessSetWorker> worker = global_worker();  // null until init finished
    return worker && worker->waiting_since().has_value();
  });
  peer_monitor_->set_tick([this] { watch_for_idle_stall(); });
  peer_monitor_->start(addresses, job_key, [this](int, const std::string& why) { on_peer_lost(why); });
}

std::shared_ptr<ProcessSetWorker> Runtime::global_worker() const {
  std::lock_guard<std::mutex> lock(workers_mutex_);
  auto it = workers_.find(0);
  return it == workers_.end() ? nullptr : it->second;
}

// Monitor thread, every heartbeat. The coordinator's stall inspector only sees ranks that take
// part in negotiation; a rank that enqueued nothing at all does not, so the ranks waiting for it
// detect it here, from the heartbeats that say who is waiting and who is not.
void Runtime::watch_for_idle_stall() {
  std::shared_ptr<ProcessSetWorker> worker = global_worker();
  auto since = worker ? worker->waiting_since() : std::nullopt;
  if (!since) {
    idle_stall_warned_ = false;
    return;
  }
  std::vector<int> idle = peer_monitor_->idle_peers();
  if (idle.empty()) return;
  auto age = std::chrono::steady_clock::now() - *since;
  auto seconds = std::chrono::duration_cast<std::chrono::seconds>(age).count();
  bool warn = config_.stall_check_time.count() > 0 && age >= config_.stall_check_time;
  bool fail = config_.stall_shutdown_time.count() > 0 && age >= config_.stall_shutdown_time;
  if (!warn && !fail) return;
  std::vector<int64_t> idle64(idle.begin(), idle.end());
  std::string names;
  for (const std::string& name : worker->waiting_for()) names += (names.empty() ? "'" : ", '") + name + "'";
  std::string text = "stall: tensors [" + names + "] have waited " + std::to_string(seconds) +
                     " s on rank " + std::to_string(topology_.rank) + "; ranks " +
                     shape_string(idle64) +
                     " have enqueued nothing (busy elsewhere, e.g. evaluating or checkpointing on "
                     "one rank, or stuck)";
  if (fail) {
    worker->fail(ErrorCode::kTimeout, text + ". RUNRUN_STALL_SHUTDOWN_TIME=" +
                                          std::to_string(config_.stall_shutdown_time.count()) +
                                          " s passed: every op on this rank fails.");
  } else if (!idle_stall_warned_) {
    idle_stall_warned_ = true;
    logger_->warn("{}", text);
  }
}

void Runtime::on_peer_lost(const std::string& why) {
  skip_transport_finalize();
  std::string message = "runrun on rank " + std::to_string(topology_.rank) + ": " + why +
                        ". Every pending and later op fails; shut down and restart the job "
                        "(see docs/troubleshooting.md).";
  std::vector<std::shared_ptr<ProcessSetWorker>> workers;
  {
    std::lock_guard<std::mutex> lock(workers_mutex_);
    for (auto& [id, worker] : workers_) workers.push_back(worker);
  }
  for (auto& worker : workers) worker->fail(ErrorCode::kPeerFailure, message);
}

void Runtime::shutdown() {
  shut_down_ = true;
  std::vector<std::shared_ptr<ProcessSetWorker>> workers;
  {
    std::lock_guard<std::mutex> lock(workers_mutex_);
    for (auto it = workers_.rbegin(); it != workers_.rend(); ++it) workers.push_back(it->second);
  }
  for (auto& worker : workers) worker->shutdown();  // added sets first, the global set last
  if (peer_monitor_) peer_monitor_->stop();  // says goodbye: peers do not take it for a loss
  timeline_.stop();  // valid JSON on every shutdown path, errors included
}

bool Runtime::running() const {
  if (shut_down_) return false;
  return worker(0).running();
}

std::shared_ptr<ProcessSetWorker> Runtime::worker_ptr(int32_t process_set) const {
  std::lock_guard<std::mutex> lock(workers_mutex_);
  auto it = workers_.find(process_set);
  if (it != workers_.end()) return it->second;
  auto set = process_sets_.find(process_set);
  RUNRUN_ENFORCE(set != process_sets_.end(), InvalidArgumentError,
                 "process set " + std::to_string(process_set) + " does not exist on rank " +
                     std::to_string(topology_.rank) +
                     ": use 0 (the global set) or an id returned by add_process_set");
  std::vector<int64_t> ranks(set->second.begin(), set->second.end());
  throw InvalidArgumentError(RUNRUN_WHERE, "rank " + std::to_string(topology_.rank) +
                                               " is not a member of process set " +
                                               std::to_string(process_set) + " (ranks " +
                                               shape_string(ranks) +
                                               "): only its members may enqueue ops on it");
}

ProcessSetWorker& Runtime::worker(int32_t process_set) const { return *worker_ptr(process_set); }

std::shared_ptr<Handle> Runtime::submit(std::vector<std::unique_ptr<TensorEntry>> entries,
                                        int32_t process_set) {
  std::shared_ptr<Handle> handle = entries.front()->handle;
  worker_ptr(process_set)->enqueue(std::move(entries));
  return handle;
}

std::shared_ptr<Handle> Runtime::run_on_global_thread(
    Request request, std::function<void(Backend&, Handle&)> action) {
  auto handle = std::make_shared<Handle>();
  std::vector<std::unique_ptr<TensorEntry>> entries;
  entries.push_back(make_entry(std::move(request), TensorView{nullptr, DataType::kUInt8, {0}},
                               TensorView{nullptr, DataType::kUInt8, {0}}, handle, 0));
  entries.back()->action = std::move(action);
  return submit(std::move(entries), 0);
}

void Runtime::install_process_set(int32_t id, std::vector<int> ranks,
                                  std::unique_ptr<Backend> backend) {
  std::lock_guard<std::mutex> lock(workers_mutex_);
  process_sets_[id] = std::move(ranks);
  if (backend) {
    workers_[id] =
        std::make_shared<ProcessSetWorker>(id, std::move(backend), config_, logger_, &timeline_);
  }
}

int32_t Runtime::add_process_set(const std::vector<int>& ranks) {
  const int rank = topology_.rank;
  std::vector<int64_t> ranks64(ranks.begin(), ranks.end());
  bool valid = !ranks.empty() && std::is_sorted(ranks.begin(), ranks.end()) &&
               std::adjacent_find(ranks.begin(), ranks.end()) == ranks.end() &&
               ranks.front() >= 0 && ranks.back() < topology_.size;
  RUNRUN_ENFORCE(valid, InvalidArgumentError,
                 "add_process_set on rank " + std::to_string(rank) + ": ranks " +
                     shape_string(ranks64) + " must be non-empty, sorted, distinct and within 0.." +
                     std::to_string(topology_.size - 1));
  Request r;
  r.name = std::string(kReservedPrefix) + "process_set.add." + std::to_string(control_op_count_++);
  r.op = OpType::kProcessSetAdd;
  r.dtype = DataType::kUInt8;
  r.splits = ranks64;
  auto handle = run_on_global_thread(std::move(r), [this, ranks](Backend& global, Handle& done) {
    {
      std::lock_guard<std::mutex> lock(workers_mutex_);
      for (const auto& [id, existing] : process_sets_) {
        RUNRUN_ENFORCE(existing != ranks, InvalidArgumentError,
                       "add_process_set: a process set with these ranks already exists (id " +
                           std::to_string(id) + "); reuse it");
      }
    }
    std::unique_ptr<Backend> backend = global.create_subgroup(ranks);
    int32_t id = next_process_set_id_++;
    install_process_set(id, ranks, std::move(backend));
    done.set_result(id);
  });
  handle->wait();
  RUNRUN_ENFORCE(handle->code() == ErrorCode::kOk, InvalidArgumentError, handle->error());
  return static_cast<int32_t>(handle->result());
}

void Runtime::remove_process_set(int32_t id) {
  RUNRUN_ENFORCE(id != 0, InvalidArgumentError,
                 "remove_process_set: the global process set (0) cannot be removed");
  process_set_ranks(id);  // unknown ids fail here, at once
  Request r;
  r.name = std::string(kReservedPrefix) + "process_set.remove." + std::to_string(control_op_count_++);
  r.op = OpType::kProcessSetRemove;
  r.dtype = DataType::kUInt8;
  r.root = id;
  auto handle = run_on_global_thread(std::move(r), [this, id](Backend&, Handle&) {
    std::shared_ptr<ProcessSetWorker> removed;
    {
      std::lock_guard<std::mutex> lock(workers_mutex_);
      RUNRUN_ENFORCE(process_sets_.count(id), InvalidArgumentError,
                     "remove_process_set: process set " + std::to_string(id) + " does not exist");
      process_sets_.erase(id);
      if (auto it = workers_.find(id); it != workers_.end()) {
        removed = it->second;
        workers_.erase(it);
      }
    }
    if (removed) removed->shutdown();  // every member does this at the same point
  });
  handle->wait();
  RUNRUN_ENFORCE(handle->code() == ErrorCode::kOk, InvalidArgumentError, handle->error());
}

std::vector<int> Runtime::process_set_ranks(int32_t id) const {
  std::lock_guard<std::mutex> lock(workers_mutex_);
  auto it = process_sets_.find(id);
  RUNRUN_ENFORCE(it != process_sets_.end(), InvalidArgumentError,
                 "process set " + std::to_string(id) + " does not exist");
  return it->second;
}

int Runtime::process_set_rank(int32_t id) const {
  std::lock_guard<std::mutex> lock(workers_mutex_);
  auto it = process_sets_.find(id);
  if (it == process_sets_.end()) return -1;
  auto pos = std::find(it->second.begin(), it->second.end(), topology_.rank);
  return pos == it->second.end() ? -1 : static_cast<int>(pos - it->second.begin());
}

std::shared_ptr<Handle> Runtime::join(int32_t process_set) {
  auto handle = std::make_shared<Handle>();
  Request r;
  r.name = std::string(kReservedPrefix) + "join." + std::to_string(process_set);
  r.op = OpType::kJoin;
  r.dtype = DataType::kUInt8;
  std::vector<std::unique_ptr<TensorEntry>> entries;
  entries.push_back(make_entry(std::move(r), TensorView{nullptr, DataType::kUInt8, {0}},
                               TensorView{nullptr, DataType::kUInt8, {0}}, handle, 0));
  return submit(std::move(entries), process_set);
}

std::shared_ptr<Handle> Runtime::allreduce(const std::string& name, const TensorView& input,
                                           const TensorView& output,
                                           const AllreduceOptions& options) {
  return grouped_allreduce({name}, {input}, {output}, options);
}

std::shared_ptr<Handle> Runtime::grouped_allreduce(const std::vector<std::string>& names,
                                                   const std::vector<TensorView>& inputs,
                                                   const std::vector<TensorView>& outputs,
                                                   const AllreduceOptions& options) {
  const int rank = topology_.rank;
  RUNRUN_ENFORCE(!names.empty() && names.size() == inputs.size() &&
                     names.size() == outputs.size(),
                 InvalidArgumentError,
                 "grouped allreduce on rank " + std::to_string(rank) +
                     ": needs as many names, inputs and outputs (at least one each)");
  auto handle = std::make_shared<Handle>(names.size());
  std::vector<std::unique_ptr<TensorEntry>> entries;
  for (size_t i = 0; i < names.size(); ++i) {
    check_tensor(OpType::kAllreduce, names[i], rank, inputs[i], "input");
    check_tensor(OpType::kAllreduce, names[i], rank, outputs[i], "output");
    check_same_layout(OpType::kAllreduce, names[i], rank, inputs[i], outputs[i]);
    check_reduction(OpType::kAllreduce, names[i], rank, inputs[i].dtype, options);
    Request r;
    r.name = names[i];
    tag_group(r, names);
    r.op = OpType::kAllreduce;
    r.reduce_op = options.op;
    r.prescale = options.prescale;
    r.postscale = options.postscale;
    entries.push_back(make_entry(std::move(r), inputs[i], outputs[i], handle, i));
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
    tag_group(r, names);
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
                                          const std::vector<int64_t>& splits,
                                          int32_t process_set) {
  const int rank = topology_.rank;
  check_tensor(OpType::kAlltoall, name, rank, input, "input");
  check_has_rows(OpType::kAlltoall, name, rank, input);
  const int set_size = worker(process_set).backend().size();
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
    RUNRUN_ENFORCE(options.op == ReduceOp::kSum || options.op == ReduceOp::kAverage,
                   InvalidArgumentError,
                   where(OpType::kReducescatter, names[i], rank) + ": op " +
                       std::string(reduce_op_name(options.op)) +
                       " is not supported; use sum or average");
    check_reduction(OpType::kReducescatter, names[i], rank, inputs[i].dtype, options);
    Request r;
    r.name = names[i];
    tag_group(r, names);
    r.op = OpType::kReducescatter;
    r.reduce_op = options.op;
    r.prescale = options.prescale;
    r.postscale = options.postscale;
    entries.push_back(make_entry(std::move(r), inputs[i], TensorView{}, handle, i));
  }
  return submit(std::move(entries), options.process_set);
}

std::shared_ptr<Handle> Runtime::barrier(int32_t process_set) {
  auto handle = std::make_shared<Handle>();
  Request r;
  r.name = std::string(kReservedPrefix) + "barrier." + std::to_string(process_set) + "." +
           std::to_string(worker(process_set).next_sequence());
  r.op = OpType::kBarrier;
  r.dtype = DataType::kUInt8;
  std::vector<std::unique_ptr<TensorEntry>> entries;
  entries.push_back(make_entry(std::move(r), TensorView{nullptr, DataType::kUInt8, {0}},
                               TensorView{nullptr, DataType::kUInt8, {0}}, handle, 0));
  return submit(std::move(entries), process_set);
}

}  // namespace runrun
