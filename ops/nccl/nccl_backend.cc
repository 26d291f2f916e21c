#include "ops/nccl/nccl_backend.h"

#include <algorithm>
#include <cstring>

#include "common/errors.h"
#include "ops/base/backend_checks.h"
#include "ops/cuda/cuda_runtime_library.h"
#include "ops/cuda_streams.h"
#include "ops/nccl/nccl_completion.h"
#include "ops/nccl/nccl_types.h"

namespace runrun {

std::string nccl_unusable_reason() {
  if (!gpu::cuda_runtime_available()) {
    const gpu::CudaRuntimeProbe& probe = gpu::probe_cuda_runtime();
    return probe.library == nullptr
               ? probe.problem
               : "the CUDA runtime at " + probe.library->path + " reports no usable GPU";
  }
  const gpu::NcclProbe& probe = gpu::probe_nccl();
  return probe.library == nullptr ? probe.problem : "";
}

std::unique_ptr<DeviceBackend> make_nccl_backend(std::unique_ptr<ControlChannel> control,
                                                 const Topology& topology, int device,
                                                 std::chrono::milliseconds timeout, Logger logger) {
  return std::make_unique<gpu::NcclBackend>(std::move(control), topology, device, timeout,
                                            std::move(logger));
}

}  // namespace runrun

namespace runrun::gpu {

namespace bc = backend_checks;

struct NcclBackend::Reduction {
  nccl_abi::DataType type = nccl_abi::kUint8;
  nccl_abi::RedOp op = nccl_abi::kSum;
  bool created = false;  // a pre-multiplied sum to destroy after the call
};

NcclBackend::NcclBackend(std::unique_ptr<ControlChannel> control, const Topology& topology,
                         int device, std::chrono::milliseconds timeout, Logger logger)
    : control_(std::move(control)),
      topology_(topology),
      device_(device),
      timeout_(timeout),
      logger_(std::move(logger)) {
  const NcclLibrary& nccl = nccl_library();
  std::string id(nccl_abi::kUniqueIdBytes, '\0');
  nccl_abi::Result made = nccl_abi::kSuccess;
  if (rank() == 0) {
    nccl_abi::UniqueId unique{};
    made = nccl.get_unique_id(&unique);
    std::memcpy(id.data(), unique.internal, nccl_abi::kUniqueIdBytes);
    if (made != nccl_abi::kSuccess) id.assign(1, '\0');  // tells the others it failed
  }
  control_->broadcast(id, 0);  // the unique id travels over the CPU control channel
  if (id.size() != nccl_abi::kUniqueIdBytes) {
    throw InternalError(RUNRUN_WHERE, "ncclGetUniqueId failed on rank 0 of the group of rank " +
                                          std::to_string(rank()) + ": no NCCL communicator; " +
                                          (rank() == 0 ? nccl.error_text(made) : "see rank 0"));
  }
  nccl_abi::UniqueId unique{};
  std::memcpy(unique.internal, id.data(), nccl_abi::kUniqueIdBytes);
  DeviceGuard guard(device_);
  nccl_abi::Comm comm = nullptr;
  const nccl_abi::Result init = nccl.comm_init_rank(&comm, size(), unique, rank());
  if (init != nccl_abi::kSuccess) {
    throw PeerFailureError(RUNRUN_WHERE,
                           "ncclCommInitRank failed on rank " + std::to_string(rank()) + " of " +
                               std::to_string(size()) + " (cuda:" + std::to_string(device_) +
                               "): " + nccl.error_text(init));
  }
  comm_ = std::make_shared<NcclComm>(nccl, comm, rank(), size(), device_);
  scratch_ = malloc_async(sizeof(int32_t), runrun_stream(device_), device_);
  if (logger_) {
    logger_->debug("NCCL {} communicator of rank {} of {} on cuda:{}",
                   nccl_version_string(nccl.version), rank(), size(), device_);
  }
}

NcclBackend::~NcclBackend() {
  if (scratch_ != nullptr) free_async(scratch_, runrun_stream(device_));
}

void NcclBackend::abort_transport() {
  if (comm_) comm_->abort();
  control_->abort();
}

void NcclBackend::check_device(const char* collective, DLDevice device) const {
  if (device.device_type == kDLCUDA && device.device_id == device_) return;
  throw UnsupportedError(
      RUNRUN_WHERE, std::string(collective) + " on rank " + std::to_string(rank()) +
                        " (nccl backend on cuda:" + std::to_string(device_) + "): a buffer is on " +
                        device_string(device) + ", but this communicator moves memory of cuda:" +
                        std::to_string(device_) + " only");
}

Backend::CompletionPtr NcclBackend::completion(const char* collective) {
  return std::make_unique<NcclCompletion>(comm_, runrun_stream(device_), collective, timeout_);
}

bool NcclBackend::can_scale(DataType type, ReduceOp op, const DeviceReduceScaling& s) const {
  return nccl_can_scale(type, op, s);
}

}  // namespace runrun::gpu

namespace runrun {

bool nccl_can_scale(DataType type, ReduceOp op, const DeviceReduceScaling& s) {
  if (op == ReduceOp::kAdasum) return false;  // runs on the host (ops/adasum/adasum_allreduce.h)
  if (!gpu::nccl_reduce_type(type, s.average ? ReduceOp::kAverage : op)) return false;
  if (s.average && op != ReduceOp::kSum) return false;
  const bool scaled = s.factor != 1.0 || s.average;
  if (!scaled) return true;
  // Averages and factors: pre-multiplied sums of floating types (an integer average rounds on
  // the host, which ncclAvg's truncating division would not match).
  return op == ReduceOp::kSum && is_floating_point(type);
}

}  // namespace runrun

namespace runrun::gpu {

NcclBackend::Reduction NcclBackend::reduction(const char* collective, DataType type, ReduceOp op,
                                              const DeviceReduceScaling& scaling) {
  if (!can_scale(type, op, scaling)) {
    throw UnsupportedError(
        RUNRUN_WHERE, std::string(collective) + " on rank " + std::to_string(rank()) +
                          " (nccl backend): " + std::string(reduce_op_name(op)) + " of " +
                          std::string(data_type_name(type)) + (scaling.average ? " averaged" : "") +
                          (scaling.factor != 1.0 ? " scaled by " + std::to_string(scaling.factor)
                                                 : std::string()) +
                          " has no NCCL operation (the core stages such ops to the host)");
  }
  Reduction r;
  r.type = *nccl_reduce_type(type, scaling.average ? ReduceOp::kAverage : op);
  if (scaling.average && scaling.factor == 1.0) {
    r.op = nccl_abi::kAvg;
  } else if (scaling.average || scaling.factor != 1.0) {
    const double factor = scaling.factor / (scaling.average ? size() : 1);
    std::vector<unsigned char> scalar = nccl_scalar(factor, type);
    comm_->check(comm_->nccl().red_op_create_pre_mul_sum(
                     &r.op, scalar.data(), r.type, nccl_abi::kScalarHostImmediate, comm_->get()),
                 "ncclRedOpCreatePreMulSum");
    r.created = true;
  } else {
    r.op = nccl_op(op);
  }
  return r;
}

Backend::CompletionPtr NcclBackend::start_allreduce(ConstDeviceBuffer in, DeviceBuffer out,
                                                    size_t count, DataType type, ReduceOp op) {
  bc::check_reduce_op(*this, "allreduce", op);
  return start_allreduce_scaled(in, out, count, type, op, {});
}

Backend::CompletionPtr NcclBackend::start_allreduce_scaled(ConstDeviceBuffer in, DeviceBuffer out,
                                                           size_t count, DataType type, ReduceOp op,
                                                           const DeviceReduceScaling& scaling) {
  comm_->throw_if_failed();
  check_device("allreduce", in.device);
  check_device("allreduce", out.device);
  const Reduction r = reduction("allreduce", type, op, scaling);
  DeviceGuard guard(device_);
  if (count > 0) {
    comm_->check(comm_->nccl().all_reduce(in.data, out.data, count, r.type, r.op, comm_->get(),
                                          runrun_stream(device_)),
                 "ncclAllReduce");
  }
  if (r.created) comm_->nccl().red_op_destroy(r.op, comm_->get());
  return completion("allreduce");
}

Backend::CompletionPtr NcclBackend::start_allgatherv(ConstDeviceBuffer in, size_t send_bytes,
                                                     DeviceBuffer out,
                                                     const std::vector<size_t>& recv_bytes) {
  comm_->throw_if_failed();
  bc::check_allgatherv(*this, send_bytes, recv_bytes);
  check_device("allgather", in.device);
  check_device("allgather", out.device);
  DeviceGuard guard(device_);
  const NcclLibrary& nccl = comm_->nccl();
  const cuda_abi::Stream stream = runrun_stream(device_);
  auto* base = static_cast<char*>(out.data);
  const bool even = std::all_of(recv_bytes.begin(), recv_bytes.end(),
                                [&](size_t b) { return b == recv_bytes[0]; });
  if (bc::total(recv_bytes) == 0) return completion("allgather");
  if (even) {  // in place when `in` is this rank's block of `out` (NCCL allows that)
    comm_->check(
        nccl.all_gather(in.data, out.data, send_bytes, nccl_abi::kUint8, comm_->get(), stream),
        "ncclAllGather");
    return completion("allgather");
  }
  // Uneven blocks: one broadcast per rank from its input into its block, in one group.
  comm_->check(nccl.group_start(), "ncclGroupStart");
  size_t offset = 0;
  for (int r = 0; r < size(); ++r) {
    const size_t bytes = recv_bytes[static_cast<size_t>(r)];
    if (bytes > 0) {
      const void* send = r == rank() ? in.data : base + offset;
      nccl.broadcast(send, base + offset, bytes, nccl_abi::kUint8, r, comm_->get(), stream);
    }
    offset += bytes;
  }
  comm_->check(nccl.group_end(), "ncclGroupEnd (allgather as grouped broadcasts)");
  return completion("allgather");
}

Backend::CompletionPtr NcclBackend::start_broadcast(DeviceBuffer buffer, size_t bytes, int root) {
  comm_->throw_if_failed();
  bc::check_root(*this, "broadcast", root);
  check_device("broadcast", buffer.device);
  DeviceGuard guard(device_);
  if (bytes > 0) {
    comm_->check(comm_->nccl().broadcast(buffer.data, buffer.data, bytes, nccl_abi::kUint8, root,
                                         comm_->get(), runrun_stream(device_)),
                 "ncclBroadcast");
  }
  return completion("broadcast");
}

Backend::CompletionPtr NcclBackend::start_alltoallv(ConstDeviceBuffer in,
                                                    const std::vector<size_t>& send_bytes,
                                                    DeviceBuffer out,
                                                    const std::vector<size_t>& recv_bytes) {
  comm_->throw_if_failed();
  bc::check_per_rank(*this, "alltoall", "send_bytes", send_bytes.size());
  bc::check_per_rank(*this, "alltoall", "recv_bytes", recv_bytes.size());
  check_device("alltoall", in.device);
  check_device("alltoall", out.device);
  if (send_bytes[static_cast<size_t>(rank())] != recv_bytes[static_cast<size_t>(rank())]) {
    throw InvalidArgumentError(
        RUNRUN_WHERE, "alltoall on rank " + std::to_string(rank()) + " (nccl backend): sends " +
                          std::to_string(send_bytes[rank()]) + " bytes to itself but receives " +
                          std::to_string(recv_bytes[rank()]));
  }
  DeviceGuard guard(device_);
  const NcclLibrary& nccl = comm_->nccl();
  const cuda_abi::Stream stream = runrun_stream(device_);
  const auto* src = static_cast<const char*>(in.data);
  auto* dst = static_cast<char*>(out.data);
  size_t send_offset = 0, recv_offset = 0;
  comm_->check(nccl.group_start(), "ncclGroupStart");
  for (int p = 0; p < size(); ++p) {
    const size_t s = send_bytes[static_cast<size_t>(p)], r = recv_bytes[static_cast<size_t>(p)];
    if (p == rank()) {
      copy_async(dst + recv_offset, src + send_offset, s, stream, device_);
    } else {
      if (s > 0) nccl.send(src + send_offset, s, nccl_abi::kUint8, p, comm_->get(), stream);
      if (r > 0) nccl.recv(dst + recv_offset, r, nccl_abi::kUint8, p, comm_->get(), stream);
    }
    send_offset += s;
    recv_offset += r;
  }
  comm_->check(nccl.group_end(), "ncclGroupEnd (alltoall as grouped send/recv)");
  return completion("alltoall");
}

Backend::CompletionPtr NcclBackend::start_reducescatter(ConstDeviceBuffer in, DeviceBuffer out,
                                                        const std::vector<size_t>& recv_counts,
                                                        DataType type, ReduceOp op) {
  bc::check_reduce_op(*this, "reducescatter", op);
  return start_reducescatter_scaled(in, out, recv_counts, type, op, {});
}

Backend::CompletionPtr NcclBackend::start_reducescatter_scaled(
    ConstDeviceBuffer in, DeviceBuffer out, const std::vector<size_t>& recv_counts, DataType type,
    ReduceOp op, const DeviceReduceScaling& scaling) {
  comm_->throw_if_failed();
  bc::check_per_rank(*this, "reducescatter", "recv_counts", recv_counts.size());
  check_device("reducescatter", in.device);
  check_device("reducescatter", out.device);
  const Reduction r = reduction("reducescatter", type, op, scaling);
  DeviceGuard guard(device_);
  const NcclLibrary& nccl = comm_->nccl();
  const cuda_abi::Stream stream = runrun_stream(device_);
  const bool even = std::all_of(recv_counts.begin(), recv_counts.end(),
                                [&](size_t c) { return c == recv_counts[0]; });
  const size_t bytes = element_size(type);
  const auto* src = static_cast<const char*>(in.data);
  const size_t mine = recv_counts[static_cast<size_t>(rank())] * bytes;
  size_t my_offset = 0;
  for (int p = 0; p < rank(); ++p) my_offset += recv_counts[static_cast<size_t>(p)] * bytes;
  // NCCL reads its input while it writes the output: an output inside the input is allowed
  // only at this rank's block of an even ncclReduceScatter, otherwise it goes through a
  // temporary and is copied in place after (stream-ordered, freed on the stream).
  void* target = out.data;
  void* temporary = nullptr;
  const bool nccl_in_place = even && out.data == src + my_offset;
  if (!nccl_in_place && mine > 0 &&
      bc::overlaps(in.data, bc::total(recv_counts) * bytes, out.data, mine)) {
    temporary = malloc_async(mine, stream, device_);
    target = temporary;
  }
  if (bc::total(recv_counts) == 0) {
  } else if (even) {
    comm_->check(
        nccl.reduce_scatter(in.data, target, recv_counts[0], r.type, r.op, comm_->get(), stream),
        "ncclReduceScatter");
  } else {  // uneven blocks: one reduce per block to the rank that keeps it, in one group
    size_t offset = 0;
    comm_->check(nccl.group_start(), "ncclGroupStart");
    for (int p = 0; p < size(); ++p) {
      const size_t count = recv_counts[static_cast<size_t>(p)];
      if (count > 0) {
        nccl.reduce(src + offset * bytes, target, count, r.type, r.op, p, comm_->get(), stream);
      }
      offset += count;
    }
    comm_->check(nccl.group_end(), "ncclGroupEnd (reducescatter as grouped reduces)");
  }
  if (temporary != nullptr) {
    copy_async(out.data, temporary, mine, stream, device_);
    free_async(temporary, stream);
  }
  if (r.created) nccl.red_op_destroy(r.op, comm_->get());
  return completion("reducescatter");
}

Backend::CompletionPtr NcclBackend::start_barrier() {
  comm_->throw_if_failed();
  DeviceGuard guard(device_);
  comm_->check(comm_->nccl().all_reduce(scratch_, scratch_, 1, nccl_abi::kInt32, nccl_abi::kSum,
                                        comm_->get(), runrun_stream(device_)),
               "ncclAllReduce (barrier)");
  return completion("barrier");
}

std::unique_ptr<ControlChannel> NcclBackend::create_control_channel() {
  std::vector<int> all(static_cast<size_t>(size()));
  for (int r = 0; r < size(); ++r) all[static_cast<size_t>(r)] = r;
  return control_->create_subgroup(all);
}

std::unique_ptr<Backend> NcclBackend::create_subgroup(const std::vector<int>& ranks) {
  bc::check_subgroup_ranks(*this, ranks);
  std::unique_ptr<ControlChannel> channel = control_->create_subgroup(ranks);
  if (!channel) return nullptr;
  Topology sub;
  sub.size = static_cast<int>(ranks.size());
  sub.rank = static_cast<int>(std::find(ranks.begin(), ranks.end(), rank()) - ranks.begin());
  sub.local_rank = sub.rank;  // NCCL finds the hosts itself; the core's topology is the set's
  sub.local_size = sub.size;
  return std::make_unique<NcclBackend>(std::move(channel), sub, device_, timeout_, logger_);
}

}  // namespace runrun::gpu
