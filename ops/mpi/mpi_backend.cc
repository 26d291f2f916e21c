#include "ops/mpi/mpi_backend.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <utility>

#include "common/errors.h"
#include "ops/backend_checks.h"
#include "ops/mpi/mpi_byte_layout.h"
#include "ops/mpi/mpi_check.h"
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

MpiBackend::MpiBackend(MpiBackendOptions options) : MpiBackend(duplicate_world(), std::move(options)) {}

MpiBackend::MpiBackend(MPI_Comm group, MpiBackendOptions options)
    : options_(std::move(options)), data_(group) {
  if (options_.max_count_per_call == 0 || options_.max_count_per_call > INT_MAX) {
    options_.max_count_per_call = INT_MAX;
  }
  MPI_Comm_rank(data_, &topology_.rank);
  MPI_Comm_size(data_, &topology_.size);
  const char* op = "creating the mpi backend";
  RUNRUN_MPI_CHECK(MPI_Comm_set_errhandler(data_, MPI_ERRORS_RETURN), op, topology_.rank);
  RUNRUN_MPI_CHECK(MPI_Comm_dup(data_, &control_comm_), op, topology_.rank);
  RUNRUN_MPI_CHECK(MPI_Comm_set_errhandler(control_comm_, MPI_ERRORS_RETURN), op, topology_.rank);
  init_topology();
  waiter_ = std::make_shared<MpiWaiter>(topology_.rank, options_.collective_timeout);
  control_ = std::make_unique<MpiControlChannel>(control_comm_, topology_.rank, topology_.size,
                                                 waiter_);
  if (options_.logger && !threads_multiple()) {
    options_.logger->warn(
        "MPI provides {} but runrun calls MPI from its background thread: initialize MPI with "
        "MPI_THREAD_MULTIPLE (or let runrun initialize it)",
        thread_level_name());
  }
}

MpiBackend::~MpiBackend() {
  // MPI may already be finalized (an application that owns MPI finalized it first); then the
  // communicators are gone with it.
  if (!is_active()) return;
  if (control_comm_ != MPI_COMM_NULL) MPI_Comm_free(&control_comm_);
  if (data_ != MPI_COMM_NULL) MPI_Comm_free(&data_);
}

void MpiBackend::init_topology() {
  const char* op = "computing the mpi topology";
  MPI_Comm local = MPI_COMM_NULL;
  RUNRUN_MPI_CHECK(MPI_Comm_split_type(data_, MPI_COMM_TYPE_SHARED, topology_.rank,
                                       MPI_INFO_NULL, &local),
                   op, topology_.rank);
  MPI_Comm_rank(local, &topology_.local_rank);
  MPI_Comm_size(local, &topology_.local_size);
  MPI_Comm_free(&local);
  // As in Horovod: the ranks sharing a local_rank, one per host, ordered by rank.
  MPI_Comm cross = MPI_COMM_NULL;
  RUNRUN_MPI_CHECK(MPI_Comm_split(data_, topology_.local_rank, topology_.rank, &cross), op,
                   topology_.rank);
  MPI_Comm_rank(cross, &topology_.cross_rank);
  MPI_Comm_size(cross, &topology_.cross_size);
  MPI_Comm_free(&cross);
}

void MpiBackend::allreduce(const void* in, void* out, size_t count, DataType type, ReduceOp op) {
  const char* name = "allreduce";
  backend_checks::check_reduce_op(*this, name, op);
  waiter_->check_usable(name);
  const size_t esize = element_size(type);
  const MPI_Datatype datatype = datatype_for(type);
  const MPI_Op mpi_op = op_for(type, op);
  const bool in_place = in == out;
  for (size_t done = 0; done < count; done += options_.max_count_per_call) {
    const size_t n = std::min(options_.max_count_per_call, count - done);
    const void* send = in_place ? MPI_IN_PLACE : static_cast<const char*>(in) + done * esize;
    MPI_Request request = MPI_REQUEST_NULL;
    RUNRUN_MPI_CHECK(MPI_Iallreduce(send, static_cast<char*>(out) + done * esize,
                                    static_cast<int>(n), datatype, mpi_op, data_, &request),
                     name, rank());
    waiter_->wait(request, name);
  }
}

void MpiBackend::allgatherv(const void* in, size_t send_bytes, void* out,
                            const std::vector<size_t>& recv_bytes) {
  const char* name = "allgatherv";
  backend_checks::check_allgatherv(*this, send_bytes, recv_bytes);
  waiter_->check_usable(name);
  if (backend_checks::total(recv_bytes) == 0) return;  // the same decision on every rank
  const ByteLayout layout =
      make_byte_layout(recv_bytes, options_.max_count_per_call, name, rank(), "recv_bytes");
  const auto me = static_cast<size_t>(rank());
  char* my_block = static_cast<char*>(out) + (static_cast<size_t>(layout.displs[me]) << layout.block_log2);
  std::vector<char> staged;
  const void* send = in;
  if (in == my_block) {
    send = MPI_IN_PLACE;
  } else if (backend_checks::overlaps(in, send_bytes, out, backend_checks::total(recv_bytes))) {
    staged = copy_of(in, send_bytes);
    send = staged.data();
  }
  MPI_Request request = MPI_REQUEST_NULL;
  RUNRUN_MPI_CHECK(MPI_Iallgatherv(send, layout.counts[me], layout.type, out, layout.counts.data(),
                                   layout.displs.data(), layout.type, data_, &request),
                   name, rank());
  waiter_->wait(request, name);
}

void MpiBackend::broadcast(void* buffer, size_t bytes, int root) {
  const char* name = "broadcast";
  backend_checks::check_root(*this, name, root);
  waiter_->check_usable(name);
  for (size_t done = 0; done < bytes; done += options_.max_count_per_call) {
    const size_t n = std::min(options_.max_count_per_call, bytes - done);
    MPI_Request request = MPI_REQUEST_NULL;
    RUNRUN_MPI_CHECK(MPI_Ibcast(static_cast<char*>(buffer) + done, static_cast<int>(n), MPI_BYTE,
                                root, data_, &request),
                     name, rank());
    waiter_->wait(request, name);
  }
}

void MpiBackend::alltoallv(const void* in, const std::vector<size_t>& send_bytes, void* out,
                           const std::vector<size_t>& recv_bytes) {
  const char* name = "alltoallv";
  backend_checks::check_per_rank(*this, name, "send_bytes", send_bytes.size());
  backend_checks::check_per_rank(*this, name, "recv_bytes", recv_bytes.size());
  waiter_->check_usable(name);
  const size_t limit = options_.max_count_per_call;
  const ByteLayout sends = make_byte_layout(send_bytes, limit, name, rank(), "send_bytes");
  const ByteLayout recvs = make_byte_layout(recv_bytes, limit, name, rank(), "recv_bytes");
  std::vector<char> staged;
  const void* send = in;
  const size_t in_bytes = backend_checks::total(send_bytes);
  if (backend_checks::overlaps(in, in_bytes, out, backend_checks::total(recv_bytes))) {
    staged = copy_of(in, in_bytes);
    send = staged.data();
  }
  MPI_Request request = MPI_REQUEST_NULL;
  RUNRUN_MPI_CHECK(MPI_Ialltoallv(send, sends.counts.data(), sends.displs.data(), sends.type, out,
                                  recvs.counts.data(), recvs.displs.data(), recvs.type, data_,
                                  &request),
                   name, rank());
  waiter_->wait(request, name);
}

void MpiBackend::reducescatter(const void* in, void* out, const std::vector<size_t>& recv_counts,
                               DataType type, ReduceOp op) {
  const char* name = "reducescatter";
  backend_checks::check_reduce_op(*this, name, op);
  backend_checks::check_per_rank(*this, name, "recv_counts", recv_counts.size());
  waiter_->check_usable(name);
  const size_t total = backend_checks::total(recv_counts);
  if (total == 0) return;  // the same decision on every rank
  const size_t esize = element_size(type);
  const size_t mine = recv_counts[static_cast<size_t>(rank())];
  std::vector<char> staged;
  const char* send = static_cast<const char*>(in);
  if (backend_checks::overlaps(in, total * esize, out, mine * esize)) {
    staged = copy_of(in, total * esize);
    send = staged.data();
  }
  if (*std::max_element(recv_counts.begin(), recv_counts.end()) > options_.max_count_per_call) {
    reducescatter_rounds(send, static_cast<char*>(out), recv_counts, type, op);
    return;
  }
  const std::vector<int> counts(recv_counts.begin(), recv_counts.end());
  MPI_Request request = MPI_REQUEST_NULL;
  RUNRUN_MPI_CHECK(MPI_Ireduce_scatter(send, out, counts.data(), datatype_for(type),
                                       op_for(type, op), data_, &request),
                   name, rank());
  waiter_->wait(request, name);
}

// Blocks larger than one MPI call: round k reduces elements [k*C, (k+1)*C) of every block,
// gathered into a staging buffer so each round is one ordinary reduce_scatter.
void MpiBackend::reducescatter_rounds(const char* in, char* out, const std::vector<size_t>& counts,
                                      DataType type, ReduceOp op) {
  const char* name = "reducescatter";
  const size_t esize = element_size(type);
  const size_t chunk = options_.max_count_per_call;
  const size_t largest = *std::max_element(counts.begin(), counts.end());
  std::vector<char> staging;
  for (size_t start = 0; start < largest; start += chunk) {
    std::vector<int> round_counts;
    staging.clear();
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
    MPI_Request request = MPI_REQUEST_NULL;
    RUNRUN_MPI_CHECK(MPI_Ireduce_scatter(staging.data(), out + start * esize, round_counts.data(),
                                         datatype_for(type), op_for(type, op), data_, &request),
                     name, rank());
    waiter_->wait(request, name);
  }
}

void MpiBackend::barrier() {
  waiter_->check_usable("barrier");
  MPI_Request request = MPI_REQUEST_NULL;
  RUNRUN_MPI_CHECK(MPI_Ibarrier(data_, &request), "barrier", rank());
  waiter_->wait(request, "barrier");
}

}  // namespace runrun::mpi
