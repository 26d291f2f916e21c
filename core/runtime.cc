#include "core/runtime.h"

#include <numeric>

namespace runrun {
namespace {

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
      logger_(make_rank_logger(topology_.rank, topology_.size, config_.log_level)) {
  logger_->info("runrun started: backend {}, rank {}/{}, local {}/{}, cross {}/{}", backend_name_,
                topology_.rank, topology_.size, topology_.local_rank, topology_.local_size,
                topology_.cross_rank, topology_.cross_size);
  workers_[0] = std::make_unique<ProcessSetWorker>(0, std::move(backend), config_, logger_);
}

Runtime::~Runtime() { shutdown(); }

void Runtime::shutdown() {
  shut_down_ = true;
  std::lock_guard<std::mutex> lock(workers_mutex_);
  for (auto& [id, worker] : workers_) worker->shutdown();
}

bool Runtime::running() const {
  if (shut_down_) return false;
  return worker(0).running();
}

ProcessSetWorker& Runtime::worker(int32_t process_set) const {
  std::lock_guard<std::mutex> lock(workers_mutex_);
  auto it = workers_.find(process_set);
  RUNRUN_ENFORCE(it != workers_.end(), InvalidArgumentError,
                 "process set " + std::to_string(process_set) + " does not exist on rank " +
                     std::to_string(topology_.rank) +
                     ": use 0 (the global set) or an id returned by add_process_set");
  return *it->second;
}

std::shared_ptr<Handle> Runtime::submit(std::vector<std::unique_ptr<TensorEntry>> entries,
                                        int32_t process_set) {
  std::shared_ptr<Handle> handle = entries.front()->handle;
  worker(process_set).enqueue(std::move(entries));
  return handle;
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
  int set_size = worker(process_set).backend().size();
  RUNRUN_ENFORCE(root >= 0 && root < set_size, InvalidArgumentError,
                 where(OpType::kBroadcast, name, rank) + ": root rank " + std::to_string(root) +
                     " is outside the process set (ranks 0.." + std::to_string(set_size - 1) +
                     ")");
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
  r.name = "barrier." + std::to_string(process_set) + "." + std::to_string(barrier_count_++);
  r.op = OpType::kBarrier;
  r.dtype = DataType::kUInt8;
  std::vector<std::unique_ptr<TensorEntry>> entries;
  entries.push_back(make_entry(std::move(r), TensorView{nullptr, DataType::kUInt8, {0}},
                               TensorView{nullptr, DataType::kUInt8, {0}}, handle, 0));
  return submit(std::move(entries), process_set);
}

}  // namespace runrun
