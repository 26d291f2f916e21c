// MpiBackend::create_subgroup: a data backend over a subset of the ranks (its control channel,
// if any, is split from the parent's channel: MpiControlChannel::create_subgroup).

#include "ops/backend_checks.h"
#include "ops/mpi/mpi_backend.h"
#include "ops/mpi/mpi_member_comm.h"

namespace runrun::mpi {
namespace {

// Tag for MPI_Comm_create_group; disjoint groups may use the same tag concurrently.
constexpr int kCreateGroupTag = 0x7272;

}  // namespace

std::unique_ptr<Backend> MpiBackend::create_subgroup(const std::vector<int>& ranks) {
  const char* op = "create_subgroup";
  backend_checks::check_subgroup_ranks(*this, ranks);
  MPI_Comm comm = create_member_comm(data_, ranks, kCreateGroupTag, *waiter_, op, rank());
  if (comm == MPI_COMM_NULL) return nullptr;
  return std::unique_ptr<Backend>(new MpiBackend(comm, options_));
}

}  // namespace runrun::mpi
