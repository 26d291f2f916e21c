#include "ops/backend.h"

#include <string>
#include <utility>

#include "common/errors.h"

namespace runrun {

Backend::~Backend() = default;

void Backend::unsupported(std::string_view op) const {
  throw UnsupportedError(RUNRUN_WHERE, std::string(op) + " is not supported by the " +
                                           std::string(name()) +
                                           " backend: choose another backend (RUNRUN_BACKEND)");
}

Backend::CompletionPtr Backend::start_allreduce(ConstDeviceBuffer, DeviceBuffer, size_t, DataType,
                                                ReduceOp) {
  unsupported("allreduce");
}
Backend::CompletionPtr Backend::start_allgatherv(ConstDeviceBuffer, size_t, DeviceBuffer,
                                                 const std::vector<size_t>&) {
  unsupported("allgather");
}
Backend::CompletionPtr Backend::start_broadcast(DeviceBuffer, size_t, int) {
  unsupported("broadcast");
}
Backend::CompletionPtr Backend::start_alltoallv(ConstDeviceBuffer, const std::vector<size_t>&,
                                                DeviceBuffer, const std::vector<size_t>&) {
  unsupported("alltoall");
}
Backend::CompletionPtr Backend::start_reducescatter(ConstDeviceBuffer, DeviceBuffer,
                                                    const std::vector<size_t>&, DataType,
                                                    ReduceOp) {
  unsupported("reducescatter");
}
Backend::CompletionPtr Backend::start_barrier() { unsupported("barrier"); }

void Backend::allreduce(const void* in, void* out, size_t count, DataType type, ReduceOp op) {
  start_allreduce(cpu_buffer(in), cpu_buffer(out), count, type, op)->wait();
}
void Backend::allgatherv(const void* in, size_t send_bytes, void* out,
                         const std::vector<size_t>& recv_bytes) {
  start_allgatherv(cpu_buffer(in), send_bytes, cpu_buffer(out), recv_bytes)->wait();
}
void Backend::broadcast(void* buffer, size_t bytes, int root) {
  start_broadcast(cpu_buffer(buffer), bytes, root)->wait();
}
void Backend::alltoallv(const void* in, const std::vector<size_t>& send_bytes, void* out,
                        const std::vector<size_t>& recv_bytes) {
  start_alltoallv(cpu_buffer(in), send_bytes, cpu_buffer(out), recv_bytes)->wait();
}
void Backend::reducescatter(const void* in, void* out, const std::vector<size_t>& recv_counts,
                            DataType type, ReduceOp op) {
  start_reducescatter(cpu_buffer(in), cpu_buffer(out), recv_counts, type, op)->wait();
}
void Backend::barrier() { start_barrier()->wait(); }

std::unique_ptr<ControlChannel> Backend::create_control_channel() {
  unsupported("a control channel (create_control_channel)");
}

ControlChannel& Backend::control() {
  if (!control_) {
    control_ = create_control_channel();
    published_.store(control_.get());
    // abort() may have run while the channel was being made, before it could see it.
    if (aborted_.load()) control_->abort();
  }
  return *control_;
}

std::unique_ptr<Backend> Backend::create_subgroup(const std::vector<int>&) {
  unsupported("process sets (create_subgroup)");
}

void Backend::abort() {
  aborted_.store(true);
  // The kept control channel first: a call blocked on it must see this rank's own abort
  // (ShutDownError), not the peers' reaction to the data transport's abort (a lost peer).
  if (ControlChannel* channel = published_.load()) channel->abort();
  abort_transport();
}

Transport transport_over(std::unique_ptr<Backend> data) {
  Transport transport;
  transport.control = data->create_control_channel();
  transport.data = std::move(data);
  return transport;
}

}  // namespace runrun
