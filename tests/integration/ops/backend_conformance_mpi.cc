// The backend conformance suite over MpiBackend, run under mpirun (ctest ops.mpi.conformance.*),
// plus the mpi backend's own paths: chunked calls (max_count_per_call lowered), the int-overflow
// error of allgatherv, abort, the collective timeout, an abort and the timeout reaching a member
// stuck creating a subgroup's communicator, re-creating a backend in one process, and the
// topology of the backend and of its subgroups against what MPI's own splits of the same ranks
// say.
// On the first failure a rank prints it and calls MPI_Abort, so no peer waits forever.

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <exception>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "common/errors.h"
#include "ops/backend_factory.h"
#include "ops/base/backend_checks.h"
#include "ops/mpi/mpi_backend.h"
#include "ops/mpi/mpi_member_comm.h"
#include "tests/support/backend_conformance.h"

namespace {

using runrun::conformance::ConformanceFailure;
using runrun::mpi::MpiBackend;
using runrun::mpi::MpiBackendOptions;

void require(bool condition, int rank, const std::string& what) {
  if (!condition) throw ConformanceFailure("rank " + std::to_string(rank) + ": " + what);
}

template <typename ErrorType, typename Fn>
void require_throws(Fn&& fn, int rank, const std::string& what) {
  try {
    fn();
  } catch (const ErrorType&) {
    return;
  }
  throw ConformanceFailure("rank " + std::to_string(rank) + ": " + what + " did not throw");
}

// Lowering max_count_per_call makes 65539-element collectives take many MPI calls.
void check_chunking() {
  MpiBackendOptions options;
  options.max_count_per_call = 1000;
  options.collective_timeout = std::chrono::seconds(120);
  MpiBackend chunked(options);
  runrun::conformance::Options small;
  small.sizes = {1, 7, 65539};
  small.large_count = 0;
  runrun::conformance::check_allreduce(chunked, small);
  runrun::conformance::check_broadcast(chunked, small);
  runrun::conformance::check_reducescatter(chunked, small);
  // Allgatherv moves 16-byte blocks here (2000 = 16 * 125): counts and displacements (125 per
  // rank) fit the lowered limit up to 8 ranks. 1001 bytes (odd) need 1001 one-byte blocks, over
  // the limit: a clear error on every rank (they all see the same recv_bytes), never a corrupt
  // transfer.
  const int size = chunked.size();
  std::vector<size_t> fits(static_cast<size_t>(size), 2000);
  std::vector<char> in(2000, 'a');
  std::vector<char> out(2000 * static_cast<size_t>(size));
  chunked.allgatherv(in.data(), 2000, out.data(), fits);
  require(out == std::vector<char>(out.size(), 'a'), chunked.rank(), "chunked allgatherv content");
  std::vector<size_t> too_big(static_cast<size_t>(size), 1001);
  std::vector<char> big_in(1001);
  std::vector<char> big_out(1001 * static_cast<size_t>(size));
  require_throws<runrun::InvalidArgumentError>(
      [&] { chunked.allgatherv(big_in.data(), 1001, big_out.data(), too_big); }, chunked.rank(),
      "allgatherv over the int limit");
  chunked.barrier();
}

// abort() before a call: ShutDownError without touching MPI.
void check_abort() {
  MpiBackend backend;
  backend.abort();
  require_throws<runrun::ShutDownError>([&] { backend.barrier(); }, backend.rank(),
                                        "barrier after abort");
}

// Rank 0 enters a barrier the others join only after its timeout: TimeoutError, then every
// later call on that backend fails; the others complete the barrier afterwards.
void check_timeout(runrun::Backend& world) {
  MpiBackendOptions options;
  options.collective_timeout = std::chrono::milliseconds(200);
  MpiBackend backend(options);
  if (backend.rank() == 0) {
    require_throws<runrun::TimeoutError>([&] { backend.barrier(); }, 0, "barrier past the timeout");
    require_throws<runrun::TimeoutError>([&] { backend.barrier(); }, 0, "barrier after a timeout");
    world.barrier();
  } else {
    world.barrier();
    backend.barrier();  // matches rank 0's abandoned barrier
  }
  world.barrier();
}

// Backend v2: a collective returns a completion at once. Rank 0 starts an allreduce that cannot
// complete before rank 1 starts its part, which it does only after rank 0's bounded wait
// returned (rank 1 waits for rank 0's word on a control channel, which is independent of the
// data communicator): the wait must report "not yet" (false), and the op must then complete
// with the right sum. Buffers on a device the backend cannot address are refused at start.
void check_completion(runrun::Backend& world) {
  MpiBackendOptions options;
  options.collective_timeout = std::chrono::seconds(120);
  MpiBackend backend(options);
  std::unique_ptr<runrun::ControlChannel> control = backend.create_control_channel();
  const int rank = backend.rank();
  float value = static_cast<float>(rank + 1);
  if (rank == 0) {
    auto completion =
        backend.start_allreduce(runrun::cpu_buffer(&value), runrun::cpu_buffer(&value), 1,
                                runrun::DataType::kFloat32, runrun::ReduceOp::kSum);
    require(!completion->wait_for(std::chrono::milliseconds(20)), rank,
            "wait_for returned true before rank 1 started the allreduce");
    require(!completion->poll(), rank, "poll returned true before rank 1 started the allreduce");
    std::string go = "go";
    control->broadcast(go, 0);
    completion->wait();
    require(completion->poll(), rank, "poll after wait");
  } else {
    std::string go;
    control->broadcast(go, 0);
    require(go == "go", rank, "control broadcast before the allreduce");
    backend
        .start_allreduce(runrun::cpu_buffer(&value), runrun::cpu_buffer(&value), 1,
                         runrun::DataType::kFloat32, runrun::ReduceOp::kSum)
        ->wait();
  }
  const int size = backend.size();
  require(value == static_cast<float>(size * (size + 1) / 2), rank,
          "allreduce through a completion");
  // The control channel outlives the backend that made it.
  backend.barrier();
  world.barrier();
  float gpu_value = 0;
  require_throws<runrun::UnsupportedError>(
      [&] {
        backend.start_allreduce(runrun::cpu_buffer(&gpu_value), {&gpu_value, {kDLCUDA, 0}}, 1,
                                runrun::DataType::kFloat32, runrun::ReduceOp::kSum);
      },
      rank, "allreduce into cuda:0 memory");
}

// Rank 1 agrees on the member list {0, 1} but does not enter the communicator creation (as if
// stopped there), so rank 0's MPI_Comm_create_group cannot finish. Either an abort, sent once
// rank 1 said it agreed (so rank 0 is past the agreement), or the collective timeout must still
// end rank 0's create_member_comm (ShutDownError, TimeoutError) and mark the parent communicator
// as still in use (it must not be freed). Afterwards rank 1 completes the creation that rank 0's
// abandoned helper thread still waits in, so nothing stays pending.
enum class GiveUp { kAbort, kTimeout };

template <typename Expected>
void check_create_group_given_up(runrun::Backend& world, GiveUp how, int tag) {
  const std::vector<int> members{0, 1};
  MPI_Comm parent = MPI_COMM_NULL;
  MPI_Comm side = MPI_COMM_NULL;  // rank 1 tells rank 0 here that it agreed
  MPI_Comm_dup(MPI_COMM_WORLD, &parent);
  MPI_Comm_dup(MPI_COMM_WORLD, &side);
  const int rank = world.rank();
  // Long enough for the agreement (all ranks come from a barrier) even on a loaded machine.
  const auto timeout = std::chrono::milliseconds(how == GiveUp::kTimeout ? 5000 : 0);
  runrun::mpi::MpiWaiter waiter(rank, timeout);
  const std::string what = how == GiveUp::kAbort ? "an abort" : "the collective timeout";
  if (rank == 0) {
    std::thread aborter([&waiter, side, how] {
      int agreed = 0;
      MPI_Recv(&agreed, 1, MPI_INT, 1, 0, side, MPI_STATUS_IGNORE);
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      if (how == GiveUp::kAbort) waiter.abort();
    });
    const auto started = std::chrono::steady_clock::now();
    require_throws<Expected>(
        [&] { runrun::mpi::create_member_comm(parent, members, tag, waiter, "test", rank); }, rank,
        "create_member_comm with a member that never creates, ended by " + what);
    aborter.join();
    require(std::chrono::steady_clock::now() - started < std::chrono::seconds(60), rank,
            what + " ended the wait late");
    require(waiter.communicator_in_use(), rank, "the abandoned helper's communicator in use");
    world.barrier();
  } else {
    const uint64_t hash = runrun::backend_checks::ranks_fingerprint(members);
    uint64_t agreed[2] = {hash, ~hash};
    MPI_Request request = MPI_REQUEST_NULL;  // matches rank 0's non-blocking agreement
    MPI_Iallreduce(MPI_IN_PLACE, agreed, 2, MPI_UINT64_T, MPI_MIN, parent, &request);
    MPI_Wait(&request, MPI_STATUS_IGNORE);
    if (rank == 1) {
      int one = 1;
      MPI_Send(&one, 1, MPI_INT, 0, 0, side);
    }
    world.barrier();  // rank 0 gave up
    if (rank == 1) {
      MPI_Group parent_group = MPI_GROUP_NULL;
      MPI_Group pair = MPI_GROUP_NULL;
      MPI_Comm_group(parent, &parent_group);
      MPI_Group_incl(parent_group, 2, members.data(), &pair);
      MPI_Comm created = MPI_COMM_NULL;
      MPI_Comm_create_group(parent, pair, tag, &created);
      require(created != MPI_COMM_NULL, rank, "the late member's communicator");
      MPI_Group_free(&pair);
      MPI_Group_free(&parent_group);
    }
  }
  world.barrier();
  MPI_Comm_free(&side);
}

// The topology as MPI's splits give it (how the backend computed it before it derived it from
// the hosts): local = MPI_COMM_TYPE_SHARED by rank, cross = same local_rank by rank.
runrun::Topology topology_by_splits(MPI_Comm comm) {
  runrun::Topology t;
  MPI_Comm_rank(comm, &t.rank);
  MPI_Comm_size(comm, &t.size);
  MPI_Comm local = MPI_COMM_NULL;
  MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, t.rank, MPI_INFO_NULL, &local);
  MPI_Comm_rank(local, &t.local_rank);
  MPI_Comm_size(local, &t.local_size);
  MPI_Comm_free(&local);
  MPI_Comm cross = MPI_COMM_NULL;
  MPI_Comm_split(comm, t.local_rank, t.rank, &cross);
  MPI_Comm_rank(cross, &t.cross_rank);
  MPI_Comm_size(cross, &t.cross_size);
  MPI_Comm_free(&cross);
  int extremes[2] = {t.cross_size, -t.cross_size};
  MPI_Allreduce(MPI_IN_PLACE, extremes, 2, MPI_INT, MPI_MIN, comm);
  t.homogeneous = extremes[0] == -extremes[1];
  return t;
}

std::string describe(const runrun::Topology& t) {
  return "rank " + std::to_string(t.rank) + "/" + std::to_string(t.size) + ", local " +
         std::to_string(t.local_rank) + "/" + std::to_string(t.local_size) + ", cross " +
         std::to_string(t.cross_rank) + "/" + std::to_string(t.cross_size) + ", homogeneous " +
         std::to_string(t.homogeneous);
}

void require_same_topology(const runrun::Topology& got, MPI_Comm comm, int rank,
                           const std::string& what) {
  const runrun::Topology expected = topology_by_splits(comm);
  require(describe(got) == describe(expected), rank,
          what + ": topology " + describe(got) + ", MPI's splits say " + describe(expected));
}

void check_topology_matches_splits(runrun::Backend& world) {
  const int rank = world.rank();
  const int size = world.size();
  require_same_topology(world.topology(), MPI_COMM_WORLD, rank, "the world backend");
  std::vector<int> odds;
  for (int r = 1; r < size; r += 2) odds.push_back(r);
  const std::vector<std::vector<int>> cases{{0, size - 1}, odds, {size - 1}};
  for (const std::vector<int>& members : cases) {
    const bool member = std::binary_search(members.begin(), members.end(), rank);
    std::unique_ptr<runrun::Backend> sub = world.create_subgroup(members);
    MPI_Comm comm = MPI_COMM_NULL;
    MPI_Comm_split(MPI_COMM_WORLD, member ? 0 : MPI_UNDEFINED, rank, &comm);
    if (!member) continue;
    require(sub != nullptr, rank, "a member's subgroup backend");
    require_same_topology(
        sub->topology(), comm, rank,
        "subgroup " + runrun::backend_checks::to_string({members.begin(), members.end()}));
    MPI_Comm_free(&comm);
  }
  world.barrier();
}

void check_control_outlives_backend() {
  std::unique_ptr<runrun::ControlChannel> control;
  {
    MpiBackend backend;
    control = backend.create_control_channel();
  }
  std::vector<uint64_t> bits{~0ULL};
  control->allreduce_and(bits);
  auto sub = control->create_subgroup({0});
  std::string text = "x";
  if (sub) sub->broadcast(text, 0);
  control->allreduce_and(bits);
}

void run(int rank) {
  {
    MpiBackend first;  // created and destroyed: MPI must stay usable for the next one
    first.barrier();
  }
  require(runrun::threads_multiple("mpi"), rank, "MPI should provide MPI_THREAD_MULTIPLE");
  MpiBackendOptions options;
  options.collective_timeout = std::chrono::seconds(120);
  MpiBackend backend(options);
  runrun::conformance::run_all(backend);
  check_chunking();
  check_abort();
  check_timeout(backend);
  check_completion(backend);
  check_topology_matches_splits(backend);
  check_create_group_given_up<runrun::ShutDownError>(backend, GiveUp::kAbort, 0x7274);
  check_create_group_given_up<runrun::TimeoutError>(backend, GiveUp::kTimeout, 0x7275);
  check_control_outlives_backend();
  backend.barrier();
}

}  // namespace

int main() {
  int rank = -1;
  try {
    runrun::BackendOptions options;
    options.name = "mpi";
    auto probe = runrun::make_backend(options);  // initializes MPI through the factory
    rank = probe->rank();
    probe.reset();
    run(rank);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "backend_conformance_mpi: FAILED on rank %d: %s\n", rank, e.what());
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
    return 1;
  }
  if (rank == 0) std::printf("backend_conformance_mpi: all checks passed\n");
  // check_create_group_given_up's abandoned helpers made the exit skip MPI_Finalize (as a
  // runtime must while a helper may still be inside MPI); here the helpers finished: finalize.
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
  return 0;
}
