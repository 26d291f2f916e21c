#include "ops/hierarchical/staged_allreduce_backend.h"

#include <string>
#include <utility>

#include "common/errors.h"
#include "ops/base/backend_checks.h"
#include "ops/cpu/reduce_kernels.h"
#include "ops/cuda_streams.h"

namespace runrun {
namespace {

// Blocks until the work enqueued so far on `stream` of `device` ran (that work only).
void wait_for_stream(gpu::cuda_abi::Stream stream, int device) {
  gpu::CudaEvent reached(device);
  reached.record(stream);
  reached.synchronize();
}

}  // namespace

StagedAllreduceBackend::StagedAllreduceBackend(std::unique_ptr<Backend> host, int device)
    : host_(std::move(host)), device_(device) {}

void StagedAllreduceBackend::check_device(DLDevice device) const {
  if (device.device_type == kDLCUDA && device.device_id == device_) return;
  throw UnsupportedError(
      RUNRUN_WHERE, "allreduce on rank " + std::to_string(rank()) + " (" + std::string(name()) +
                        " across hosts, staged from cuda:" + std::to_string(device_) +
                        "): a buffer is on " + device_string(device) +
                        ", but this stage moves memory of cuda:" + std::to_string(device_) +
                        " only");
}

bool StagedAllreduceBackend::can_scale(DataType type, ReduceOp op,
                                       const DeviceReduceScaling& scaling) const {
  if (scaling.average) return false;
  return scaling.factor == 1.0 || (op == ReduceOp::kSum && is_floating_point(type));
}

Backend::CompletionPtr StagedAllreduceBackend::start_allreduce(ConstDeviceBuffer in,
                                                               DeviceBuffer out, size_t count,
                                                               DataType type, ReduceOp op) {
  backend_checks::check_reduce_op(*this, "allreduce", op);
  return start_allreduce_scaled(in, out, count, type, op, {});
}

Backend::CompletionPtr StagedAllreduceBackend::start_allreduce_scaled(
    ConstDeviceBuffer in, DeviceBuffer out, size_t count, DataType type, ReduceOp op,
    const DeviceReduceScaling& scaling) {
  backend_checks::check_reduce_op(*this, "allreduce", op);
  check_device(in.device);
  check_device(out.device);
  if (!can_scale(type, op, scaling)) {
    throw UnsupportedError(
        RUNRUN_WHERE, "allreduce on rank " + std::to_string(rank()) + " (" + std::string(name()) +
                          " across hosts, staged): " + std::string(reduce_op_name(op)) + " of " +
                          std::string(data_type_name(type)) +
                          (scaling.average ? " averaged" : " scaled") +
                          " is not done here (the hierarchical allreduce folds an average "
                          "into a factor, for sums of floating types only)");
  }
  return run_to_completion([&] {
    if (count == 0) return;  // the same decision on every rank
    const size_t bytes = count * element_size(type);
    gpu::DeviceGuard guard(device_);
    const gpu::cuda_abi::Stream stream = gpu::runrun_stream(device_);
    gpu::PinnedBuffer host(bytes);  // from the pool: reused across ops
    // After the earlier stages on runrun's stream (stream order), then waited for: the host
    // collective reads the pinned buffer next.
    gpu::copy_async(host.data(), in.data, bytes, stream, device_);
    wait_for_stream(stream, device_);
    host_->start_allreduce(cpu_buffer(host.data()), cpu_buffer(host.data()), count, type, op)
        ->wait();
    if (scaling.factor != 1.0) cpu::scale_buffer(host.data(), count, type, scaling.factor);
    gpu::copy_async(out.data, host.data(), bytes, stream, device_);
    wait_for_stream(stream, device_);  // the pinned buffer goes back to the pool next
  });
}

Backend::CompletionPtr StagedAllreduceBackend::start_reducescatter_scaled(
    ConstDeviceBuffer, DeviceBuffer, const std::vector<size_t>&, DataType, ReduceOp,
    const DeviceReduceScaling&) {
  unsupported("reducescatter (a staged cross-host stage does allreduce only)");
}

}  // namespace runrun
