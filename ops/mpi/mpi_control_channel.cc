#include "ops/mpi/mpi_control_channel.h"

#include <climits>
#include <string>
#include <utility>

#include "common/errors.h"
#include "ops/base/backend_checks.h"
#include "ops/mpi/mpi_check.h"
#include "ops/mpi/mpi_lifetime.h"
#include "ops/mpi/mpi_member_comm.h"

namespace runrun::mpi {

namespace {

// Tag for MPI_Comm_create_group; disjoint groups may use the same tag concurrently.
constexpr int kCreateGroupTag = 0x7273;

}  // namespace

MpiControlChannel::MpiControlChannel(MPI_Comm comm, std::chrono::milliseconds collective_timeout)
    : comm_(comm), timeout_(collective_timeout) {
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
  RUNRUN_MPI_CHECK(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN),
                   "creating an mpi control channel", rank_);
  waiter_ = std::make_shared<MpiWaiter>(rank_, timeout_);
}

MpiControlChannel::~MpiControlChannel() {
  if (is_active() && !waiter_->communicator_in_use() && comm_ != MPI_COMM_NULL) {
    MPI_Comm_free(&comm_);
  }
}

std::unique_ptr<ControlChannel> MpiControlChannel::create_subgroup(const std::vector<int>& ranks) {
  const char* op = "control create_subgroup";
  waiter_->check_usable(op);
  backend_checks::check_subgroup_ranks(op, rank_, size_, ranks);
  MPI_Comm comm = create_member_comm(comm_, ranks, kCreateGroupTag, *waiter_, op, rank_);
  if (comm == MPI_COMM_NULL) return nullptr;
  return std::make_unique<MpiControlChannel>(comm, timeout_);
}

void MpiControlChannel::check_root(const char* op, int root) const {
  if (root >= 0 && root < size_) return;
  throw InvalidArgumentError(RUNRUN_WHERE, std::string(op) + " on rank " + std::to_string(rank_) +
                                               ": root " + std::to_string(root) +
                                               " is not in [0, " + std::to_string(size_) + ")");
}

int MpiControlChannel::to_int(const char* op, size_t value) const {
  if (value <= static_cast<size_t>(INT_MAX)) return static_cast<int>(value);
  throw InvalidArgumentError(RUNRUN_WHERE, std::string(op) + " on rank " + std::to_string(rank_) +
                                               ": " + std::to_string(value) +
                                               " bytes exceed MPI's int count limit; control "
                                               "messages must stay below 2 GiB");
}

void MpiControlChannel::allreduce_and(std::vector<uint64_t>& bits) {
  const char* op = "control allreduce_and";
  waiter_->check_usable(op);
  if (bits.empty()) return;
  MPI_Request request = MPI_REQUEST_NULL;
  RUNRUN_MPI_CHECK(MPI_Iallreduce(MPI_IN_PLACE, bits.data(), to_int(op, bits.size()), MPI_UINT64_T,
                                  MPI_BAND, comm_, &request),
                   op, rank_);
  waiter_->wait(request, op);
}

std::vector<std::string> MpiControlChannel::gather(const std::string& bytes, int root) {
  const char* op = "control gather";
  check_root(op, root);
  waiter_->check_usable(op);
  const bool is_root = rank_ == root;
  // First every rank's length, then the bytes.
  uint64_t length = bytes.size();
  std::vector<uint64_t> lengths(is_root ? static_cast<size_t>(size_) : 0);
  MPI_Request request = MPI_REQUEST_NULL;
  RUNRUN_MPI_CHECK(
      MPI_Igather(&length, 1, MPI_UINT64_T, lengths.data(), 1, MPI_UINT64_T, root, comm_, &request),
      op, rank_);
  waiter_->wait(request, op);
  std::vector<int> counts(lengths.size());
  std::vector<int> displs(lengths.size());
  size_t offset = 0;
  for (size_t r = 0; r < lengths.size(); ++r) {
    counts[r] = to_int(op, lengths[r]);
    displs[r] = to_int(op, offset);
    offset += lengths[r];
  }
  std::string all(offset, '\0');
  RUNRUN_MPI_CHECK(MPI_Igatherv(bytes.data(), to_int(op, bytes.size()), MPI_BYTE, all.data(),
                                counts.data(), displs.data(), MPI_BYTE, root, comm_, &request),
                   op, rank_);
  waiter_->wait(request, op);
  std::vector<std::string> gathered;
  for (size_t r = 0; r < lengths.size(); ++r) {
    gathered.push_back(all.substr(static_cast<size_t>(displs[r]), lengths[r]));
  }
  return gathered;
}

void MpiControlChannel::broadcast(std::string& bytes, int root) {
  const char* op = "control broadcast";
  check_root(op, root);
  waiter_->check_usable(op);
  uint64_t length = bytes.size();
  MPI_Request request = MPI_REQUEST_NULL;
  RUNRUN_MPI_CHECK(MPI_Ibcast(&length, 1, MPI_UINT64_T, root, comm_, &request), op, rank_);
  waiter_->wait(request, op);
  if (length == 0) {
    bytes.clear();
    return;
  }
  if (rank_ != root) bytes.assign(length, '\0');
  RUNRUN_MPI_CHECK(MPI_Ibcast(bytes.data(), to_int(op, length), MPI_BYTE, root, comm_, &request),
                   op, rank_);
  waiter_->wait(request, op);
}

}  // namespace runrun::mpi
