// MpiBackend::create_subgroup: a data backend over a subset of the ranks (its control channel,
// if any, is split from the parent's channel: MpiControlChannel::create_subgroup).

#include <algorithm>
#include <array>
#include <string>

#include "common/errors.h"
#include "ops/backend_checks.h"
#include "ops/mpi/mpi_backend.h"
#include "ops/mpi/mpi_check.h"

namespace runrun::mpi {
namespace {

// Tag for MPI_Comm_create_group; disjoint groups may use the same tag concurrently.
constexpr int kCreateGroupTag = 0x7272;

}  // namespace

std::unique_ptr<Backend> MpiBackend::create_subgroup(const std::vector<int>& ranks) {
  const char* name = "create_subgroup";
  backend_checks::check_subgroup_ranks(*this, ranks);
  waiter_->check_usable(name);
  // Every rank must pass the same list: the minimum of (h, ~h) equals (h, ~h) on every rank only
  // when all hashes agree. This also lines all ranks up before the blocking group creation.
  const uint64_t hash = backend_checks::ranks_fingerprint(ranks);
  std::array<uint64_t, 2> agreed{hash, ~hash};
  MPI_Request request = MPI_REQUEST_NULL;
  RUNRUN_MPI_CHECK(MPI_Iallreduce(MPI_IN_PLACE, agreed.data(), 2, MPI_UINT64_T, MPI_MIN,
                                  data_, &request),
                   name, rank());
  waiter_->wait(request, name);
  if (agreed[0] != hash || agreed[1] != ~hash) {
    throw MismatchError(RUNRUN_WHERE, "create_subgroup on rank " + std::to_string(rank()) +
                                          ": ranks passed different member lists (this rank: " +
                                          backend_checks::to_string({ranks.begin(), ranks.end()}) +
                                          "); every rank must pass the same sorted list");
  }
  if (!std::binary_search(ranks.begin(), ranks.end(), rank())) return nullptr;
  MPI_Group parent_group = MPI_GROUP_NULL;
  MPI_Group members = MPI_GROUP_NULL;
  RUNRUN_MPI_CHECK(MPI_Comm_group(data_, &parent_group), name, rank());
  RUNRUN_MPI_CHECK(MPI_Group_incl(parent_group, static_cast<int>(ranks.size()), ranks.data(), &members),
                   name, rank());
  MPI_Comm comm = MPI_COMM_NULL;
  RUNRUN_MPI_CHECK(MPI_Comm_create_group(data_, members, kCreateGroupTag, &comm), name, rank());
  MPI_Group_free(&members);
  MPI_Group_free(&parent_group);
  return std::unique_ptr<Backend>(new MpiBackend(comm, options_));
}

}  // namespace runrun::mpi
