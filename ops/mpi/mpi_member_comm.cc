#include "ops/mpi/mpi_member_comm.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "common/errors.h"
#include "ops/base/backend_checks.h"
#include "ops/mpi/mpi_check.h"

namespace runrun::mpi {
namespace {

// How often the waiting thread looks for an abort or the collective timeout.
constexpr std::chrono::milliseconds kAbortPoll{10};

// What the helper thread hands back. Shared: an abandoned helper outlives the caller's frame.
struct Creation {
  std::mutex mutex;
  std::condition_variable finished_cv;
  bool finished = false;
  int rc = MPI_SUCCESS;
  MPI_Comm comm = MPI_COMM_NULL;
};

void check_same_members(MPI_Comm parent, const std::vector<int>& ranks, MpiWaiter& waiter,
                        const char* op, int rank) {
  // The minimum of (h, ~h) equals (h, ~h) on every rank only when all hashes agree. This also
  // lines all ranks up before the group creation.
  const uint64_t hash = backend_checks::ranks_fingerprint(ranks);
  std::array<uint64_t, 2> agreed{hash, ~hash};
  MPI_Request request = MPI_REQUEST_NULL;
  RUNRUN_MPI_CHECK(
      MPI_Iallreduce(MPI_IN_PLACE, agreed.data(), 2, MPI_UINT64_T, MPI_MIN, parent, &request), op,
      rank);
  waiter.wait(request, op);
  if (agreed[0] == hash && agreed[1] == ~hash) return;
  throw MismatchError(RUNRUN_WHERE, std::string(op) + " on rank " + std::to_string(rank) +
                                        ": ranks passed different member lists (this rank: " +
                                        backend_checks::to_string({ranks.begin(), ranks.end()}) +
                                        "); every rank must pass the same sorted list");
}

}  // namespace

MPI_Comm create_member_comm(MPI_Comm parent, const std::vector<int>& ranks, int tag,
                            MpiWaiter& waiter, const char* op, int rank) {
  waiter.check_usable(op);
  check_same_members(parent, ranks, waiter, op, rank);
  if (!std::binary_search(ranks.begin(), ranks.end(), rank)) return MPI_COMM_NULL;
  MPI_Group parent_group = MPI_GROUP_NULL;
  MPI_Group members = MPI_GROUP_NULL;
  RUNRUN_MPI_CHECK(MPI_Comm_group(parent, &parent_group), op, rank);
  RUNRUN_MPI_CHECK(
      MPI_Group_incl(parent_group, static_cast<int>(ranks.size()), ranks.data(), &members), op,
      rank);
  MPI_Group_free(&parent_group);
  auto creation = std::make_shared<Creation>();
  std::thread([creation, parent, members, tag] {
    MPI_Comm comm = MPI_COMM_NULL;
    const int rc = MPI_Comm_create_group(parent, members, tag, &comm);
    std::lock_guard<std::mutex> lock(creation->mutex);
    creation->rc = rc;
    creation->comm = comm;
    creation->finished = true;
    creation->finished_cv.notify_all();
  }).detach();
  const auto posted = MpiWaiter::Clock::now();
  std::unique_lock<std::mutex> lock(creation->mutex);
  while (!creation->finished_cv.wait_for(lock, kAbortPoll, [&] { return creation->finished; })) {
    try {
      waiter.check_alive(op, posted);
    } catch (const Error&) {
      // An abort or the collective timeout: the helper (and `members`, which it still uses) is
      // abandoned inside MPI, on `parent`.
      waiter.abandon_helper();
      throw;
    }
  }
  MPI_Group_free(&members);
  RUNRUN_MPI_CHECK(creation->rc, op, rank);  // MPI_Comm_create_group's own result
  return creation->comm;
}

}  // namespace runrun::mpi
