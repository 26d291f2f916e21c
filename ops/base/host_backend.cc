#include "ops/base/host_backend.h"

#include "ops/base/backend_checks.h"

namespace runrun {

using CompletionPtr = Backend::CompletionPtr;

CompletionPtr HostSynchronousBackend::start_allreduce(ConstDeviceBuffer in, DeviceBuffer out,
                                                      size_t count, DataType type, ReduceOp op) {
  backend_checks::check_cpu_devices(*this, "allreduce", in.device, out.device);
  return run_to_completion([&] { run_allreduce(in.data, out.data, count, type, op); });
}

CompletionPtr HostSynchronousBackend::start_allgatherv(ConstDeviceBuffer in, size_t send_bytes,
                                                       DeviceBuffer out,
                                                       const std::vector<size_t>& recv_bytes) {
  backend_checks::check_cpu_devices(*this, "allgatherv", in.device, out.device);
  return run_to_completion([&] { run_allgatherv(in.data, send_bytes, out.data, recv_bytes); });
}

CompletionPtr HostSynchronousBackend::start_broadcast(DeviceBuffer buffer, size_t bytes, int root) {
  backend_checks::check_cpu_device(*this, "broadcast", buffer.device);
  return run_to_completion([&] { run_broadcast(buffer.data, bytes, root); });
}

CompletionPtr HostSynchronousBackend::start_alltoallv(ConstDeviceBuffer in,
                                                      const std::vector<size_t>& send_bytes,
                                                      DeviceBuffer out,
                                                      const std::vector<size_t>& recv_bytes) {
  backend_checks::check_cpu_devices(*this, "alltoallv", in.device, out.device);
  return run_to_completion([&] { run_alltoallv(in.data, send_bytes, out.data, recv_bytes); });
}

CompletionPtr HostSynchronousBackend::start_reducescatter(ConstDeviceBuffer in, DeviceBuffer out,
                                                          const std::vector<size_t>& recv_counts,
                                                          DataType type, ReduceOp op) {
  backend_checks::check_cpu_devices(*this, "reducescatter", in.device, out.device);
  return run_to_completion([&] { run_reducescatter(in.data, out.data, recv_counts, type, op); });
}

CompletionPtr HostSynchronousBackend::start_barrier() {
  return run_to_completion([&] { run_barrier(); });
}

}  // namespace runrun
