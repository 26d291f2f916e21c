// MpiBackend::create_subgroup: a data backend over a subset of the ranks (its control channel,
// if any, is split from the parent's channel: MpiControlChannel::create_subgroup).

#include <utility>
#include <vector>

#include "ops/base/backend_checks.h"
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
  // The members' hosts are known here: the new backend computes its topology without a call
  // on `comm` that a member stopped now could block.
  std::vector<int> hosts;
  hosts.reserve(ranks.size());
  for (int r : ranks) hosts.push_back(host_of_rank_[static_cast<size_t>(r)]);
  return std::unique_ptr<Backend>(new MpiBackend(comm, options_, std::move(hosts)));
}

}  // namespace runrun::mpi
