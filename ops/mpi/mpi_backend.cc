#include "ops/mpi/mpi_backend.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <utility>

#include "common/errors.h"
#include "ops/base/backend_checks.h"
#include "ops/base/host_topology.h"
#include "ops/mpi/mpi_byte_layout.h"
#include "ops/mpi/mpi_check.h"
#include "ops/mpi/mpi_control_channel.h"
#include "ops/mpi/mpi_lifetime.h"
#include "ops/mpi/mpi_types.h"

namespace runrun::mpi {
namespace {

MPI_Comm duplicate_world() {
  ensure_initialized();
  int rank = -1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm comm = MPI_COMM_NULL;
  RUNRUN_MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &comm), "creating the mpi backend", rank);
  return comm;
}

std::vector<char> copy_of(const void* data, size_t bytes) {
  std::vector<char> copy(bytes);
  if (bytes > 0) std::memcpy(copy.data(), data, bytes);
  return copy;
}

}  // namespace

MpiBackend::MpiBackend(MpiBackendOptions options)
    : MpiBackend(duplicate_world(), std::move(options), {}) {}

MpiBackend::MpiBackend(MPI_Comm group, MpiBackendOptions options, std::vector<int> host_of_rank)
    : options_(std::move(options)), data_(group), host_of_rank_(std::move(host_of_rank)) {
  if (options_.max_count_per_call == 0 || options_.max_count_per_call > INT_MAX) {
    options_.max_count_per_call = INT_MAX;
  }
  int rank = -1;
  MPI_Comm_rank(data_, &rank);
  const char* op = "creating the mpi backend";
  RUNRUN_MPI_CHECK(MPI_Comm_set_errhandler(data_, MPI_ERRORS_RETURN), op, rank);
  waiter_ = std::make_shared<MpiWaiter>(rank, options_.collective_timeout);
  if (host_of_rank_.empty()) host_of_rank_ = gather_host_of_rank();
  topology_ = topology_from_host_keys(host_of_rank_, rank);
  if (options_.logger && !threads_multiple()) {
    options_.logger->warn(
        "MPI provides {} but runrun calls MPI from its background thread: initialize MPI with "
        "MPI_THREAD_MULTIPLE (or let runrun initialize it)",
        thread_level_name());
  }
}

MpiBackend::~MpiBackend() {
  // MPI may already be finalized (an application that owns MPI finalized it first); then the
  // communicator is gone with it.
  if (!is_active() || waiter_->communicator_in_use()) return;
  if (data_ != MPI_COMM_NULL) MPI_Comm_free(&data_);
}

std::unique_ptr<ControlChannel> MpiBackend::create_control_channel() {
  const char* op = "creating an mpi control channel";
  waiter_->check_usable(op);
  // On the heap: a failed wait leaves the duplication pending, which may still write the
  // handle; it is leaked then.
  auto comm = std::make_unique<MPI_Comm>(MPI_COMM_NULL);
  MPI_Request request = MPI_REQUEST_NULL;
  RUNRUN_MPI_CHECK(MPI_Comm_idup(data_, comm.get(), &request), op, rank());
  try {
    waiter_->wait(request, op);
  } catch (...) {
    static_cast<void>(comm.release());
    throw;
  }
  return std::make_unique<MpiControlChannel>(*comm, options_.collective_timeout);
}

// As in Horovod, a host is what MPI_COMM_TYPE_SHARED groups (Open MPI: one node, as its
// launcher placed the ranks; network-namespace hosts included). The key of a host is the rank of
// its first rank, found without communicating; one non-blocking allgather shares the keys.
std::vector<int> MpiBackend::gather_host_of_rank() {
  const char* op = "computing the mpi topology";
  int rank = -1;
  int size = 0;
  MPI_Comm_rank(data_, &rank);
  MPI_Comm_size(data_, &size);
  MPI_Comm local = MPI_COMM_NULL;
  RUNRUN_MPI_CHECK(MPI_Comm_split_type(data_, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &local),
                   op, rank);
  MPI_Group local_group = MPI_GROUP_NULL;
  MPI_Group data_group = MPI_GROUP_NULL;
  MPI_Comm_group(local, &local_group);
  MPI_Comm_group(data_, &data_group);
  const int first = 0;  // the key ordered local by rank: its rank 0 is the host's lowest rank
  int host = -1;
  const int translated = MPI_Group_translate_ranks(local_group, 1, &first, data_group, &host);
  MPI_Group_free(&local_group);
  MPI_Group_free(&data_group);
  MPI_Comm_free(&local);
  RUNRUN_MPI_CHECK(translated, op, rank);
  // [0, size): every rank's key; [size]: this rank's. On the heap: a wait that fails (abort,
  // timeout) leaves the request pending, and MPI may still write here; then it is leaked.
  auto keys = std::make_unique<std::vector<int>>(static_cast<size_t>(size) + 1, -1);
  (*keys)[static_cast<size_t>(size)] = host;
  MPI_Request request = MPI_REQUEST_NULL;
  RUNRUN_MPI_CHECK(MPI_Iallgather(&(*keys)[static_cast<size_t>(size)], 1, MPI_INT, keys->data(), 1,
                                  MPI_INT, data_, &request),
                   op, rank);
  try {
    waiter_->wait(request, op);
  } catch (...) {
    static_cast<void>(keys.release());
    throw;
  }
  keys->pop_back();
  return std::move(*keys);
}

Backend::CompletionPtr MpiBackend::start_allreduce(ConstDeviceBuffer in_buffer,
                                                   DeviceBuffer out_buffer, size_t count,
                                                   DataType type, ReduceOp op) {
  const char* name = "allreduce";
  backend_checks::check_cpu_devices(*this, name, in_buffer.device, out_buffer.device);
  backend_checks::check_reduce_op(*this, name, op);
  waiter_->check_usable(name);
  const void* in = in_buffer.data;
  void* out = out_buffer.data;
  const size_t esize = element_size(type);
  const MPI_Datatype datatype = datatype_for(type);
  const MPI_Op mpi_op = op_for(type, op);
  const bool in_place = in == out;
  auto completion = std::make_unique<MpiCompletion>(waiter_, name);
  // A count above one call's limit is posted as several calls at once; MPI matches the
  // non-blocking collectives of a communicator in posting order on every rank.
  for (size_t done = 0; done < count; done += options_.max_count_per_call) {
    const size_t n = std::min(options_.max_count_per_call, count - done);
    const void* send = in_place ? MPI_IN_PLACE : static_cast<const char*>(in) + done * esize;
    RUNRUN_MPI_CHECK(
        MPI_Iallreduce(send, static_cast<char*>(out) + done * esize, static_cast<int>(n), datatype,
                       mpi_op, data_, completion->next_request()),
        name, rank());
  }
  return completion;
}

Backend::CompletionPtr MpiBackend::start_allgatherv(ConstDeviceBuffer in_buffer, size_t send_bytes,
                                                    DeviceBuffer out_buffer,
                                                    const std::vector<size_t>& recv_bytes) {
  const char* name = "allgatherv";
  backend_checks::check_cpu_devices(*this, name, in_buffer.device, out_buffer.device);
  backend_checks::check_allgatherv(*this, send_bytes, recv_bytes);
  waiter_->check_usable(name);
  auto completion = std::make_unique<MpiCompletion>(waiter_, name);
  if (backend_checks::total(recv_bytes) == 0) return completion;  // the same on every rank
  const void* in = in_buffer.data;
  void* out = out_buffer.data;
  const ByteLayout layout =
      make_byte_layout(recv_bytes, options_.max_count_per_call, name, rank(), "recv_bytes");
  const auto me = static_cast<size_t>(rank());
  char* my_block =
      static_cast<char*>(out) + (static_cast<size_t>(layout.displs[me]) << layout.block_log2);
  const void* send = in;
  if (in == my_block) {
    send = MPI_IN_PLACE;
  } else if (backend_checks::overlaps(in, send_bytes, out, backend_checks::total(recv_bytes))) {
    send = completion->keep(copy_of(in, send_bytes)).data();
  }
  RUNRUN_MPI_CHECK(
      MPI_Iallgatherv(send, layout.counts[me], layout.type, out, layout.counts.data(),
                      layout.displs.data(), layout.type, data_, completion->next_request()),
      name, rank());
  return completion;
}

Backend::CompletionPtr MpiBackend::start_broadcast(DeviceBuffer buffer, size_t bytes, int root) {
  const char* name = "broadcast";
  backend_checks::check_cpu_device(*this, name, buffer.device);
  backend_checks::check_root(*this, name, root);
  waiter_->check_usable(name);
  auto completion = std::make_unique<MpiCompletion>(waiter_, name);
  for (size_t done = 0; done < bytes; done += options_.max_count_per_call) {
    const size_t n = std::min(options_.max_count_per_call, bytes - done);
    RUNRUN_MPI_CHECK(MPI_Ibcast(static_cast<char*>(buffer.data) + done, static_cast<int>(n),
                                MPI_BYTE, root, data_, completion->next_request()),
                     name, rank());
  }
  return completion;
}

Backend::CompletionPtr MpiBackend::start_alltoallv(ConstDeviceBuffer in_buffer,
                                                   const std::vector<size_t>& send_bytes,
                                                   DeviceBuffer out_buffer,
                                                   const std::vector<size_t>& recv_bytes) {
  const char* name = "alltoallv";
  backend_checks::check_cpu_devices(*this, name, in_buffer.device, out_buffer.device);
  backend_checks::check_per_rank(*this, name, "send_bytes", send_bytes.size());
  backend_checks::check_per_rank(*this, name, "recv_bytes", recv_bytes.size());
  waiter_->check_usable(name);
  const size_t limit = options_.max_count_per_call;
  const ByteLayout sends = make_byte_layout(send_bytes, limit, name, rank(), "send_bytes");
  const ByteLayout recvs = make_byte_layout(recv_bytes, limit, name, rank(), "recv_bytes");
  auto completion = std::make_unique<MpiCompletion>(waiter_, name);
  const void* send = in_buffer.data;
  void* out = out_buffer.data;
  const size_t in_bytes = backend_checks::total(send_bytes);
  const size_t out_bytes = backend_checks::total(recv_bytes);
  if (backend_checks::overlaps(send, in_bytes, out, out_bytes)) {
    send = completion->keep(copy_of(send, in_bytes)).data();
  } else if (send == out) {
    // One side is empty. Open MPI's libnbc takes equal pointers for MPI_IN_PLACE and would send
    // recv_bytes from `out` (a rank that sends nothing sent its receive sizes: another rank's
    // next collective then failed with MPI_ERR_TRUNCATE). Point the empty side elsewhere.
    static char nothing_to_send;
    static char nothing_to_receive;
    if (in_bytes == 0) {
      send = &nothing_to_send;
    } else {
      out = &nothing_to_receive;
    }
  }
  RUNRUN_MPI_CHECK(MPI_Ialltoallv(send, sends.counts.data(), sends.displs.data(), sends.type, out,
                                  recvs.counts.data(), recvs.displs.data(), recvs.type, data_,
                                  completion->next_request()),
                   name, rank());
  return completion;
}

Backend::CompletionPtr MpiBackend::start_reducescatter(ConstDeviceBuffer in_buffer,
                                                       DeviceBuffer out_buffer,
                                                       const std::vector<size_t>& recv_counts,
                                                       DataType type, ReduceOp op) {
  const char* name = "reducescatter";
  backend_checks::check_cpu_devices(*this, name, in_buffer.device, out_buffer.device);
  backend_checks::check_reduce_op(*this, name, op);
  backend_checks::check_per_rank(*this, name, "recv_counts", recv_counts.size());
  waiter_->check_usable(name);
  auto completion = std::make_unique<MpiCompletion>(waiter_, name);
  const size_t total = backend_checks::total(recv_counts);
  if (total == 0) return completion;  // the same decision on every rank
  const size_t esize = element_size(type);
  const size_t mine = recv_counts[static_cast<size_t>(rank())];
  const char* send = static_cast<const char*>(in_buffer.data);
  char* out = static_cast<char*>(out_buffer.data);
  if (backend_checks::overlaps(send, total * esize, out, mine * esize)) {
    send = completion->keep(copy_of(send, total * esize)).data();
  }
  if (*std::max_element(recv_counts.begin(), recv_counts.end()) > options_.max_count_per_call) {
    reducescatter_rounds(*completion, send, out, recv_counts, type, op);
    return completion;
  }
  const std::vector<int> counts(recv_counts.begin(), recv_counts.end());
  RUNRUN_MPI_CHECK(MPI_Ireduce_scatter(send, out, counts.data(), datatype_for(type),
                                       op_for(type, op), data_, completion->next_request()),
                   name, rank());
  return completion;
}

// Blocks larger than one MPI call: round k reduces elements [k*C, (k+1)*C) of every block,
// gathered into a staging buffer of its own so each round is one ordinary reduce_scatter; all
// rounds are posted at once (MPI matches them in posting order).
void MpiBackend::reducescatter_rounds(MpiCompletion& completion, const char* in, char* out,
                                      const std::vector<size_t>& counts, DataType type,
                                      ReduceOp op) {
  const char* name = "reducescatter";
  const size_t esize = element_size(type);
  const size_t chunk = options_.max_count_per_call;
  const size_t largest = *std::max_element(counts.begin(), counts.end());
  for (size_t start = 0; start < largest; start += chunk) {
    std::vector<int> round_counts;
    std::vector<char> staging;
    size_t block_offset = 0;
    for (size_t count : counts) {
      const size_t n = count > start ? std::min(chunk, count - start) : 0;
      if (n > 0) {
        const char* piece = in + (block_offset + start) * esize;
        staging.insert(staging.end(), piece, piece + n * esize);
      }
      round_counts.push_back(static_cast<int>(n));
      block_offset += count;
    }
    const char* send = completion.keep(std::move(staging)).data();
    RUNRUN_MPI_CHECK(
        MPI_Ireduce_scatter(send, out + start * esize, round_counts.data(), datatype_for(type),
                            op_for(type, op), data_, completion.next_request()),
        name, rank());
  }
}

Backend::CompletionPtr MpiBackend::start_barrier() {
  waiter_->check_usable("barrier");
  auto completion = std::make_unique<MpiCompletion>(waiter_, "barrier");
  RUNRUN_MPI_CHECK(MPI_Ibarrier(data_, completion->next_request()), "barrier", rank());
  return completion;
}

}  // namespace runrun::mpi
