// runrun_mpi_progress_study: isolates where the runtime's time goes at the MPI level, without
// the runtime, so a change to ops/mpi or core/ can be judged by numbers (docs/perf-notes/
// mpi-2026-11-21.md).
//   mpirun -np 2 --bind-to none runrun_mpi_progress_study
// It times, on a duplicated communicator:
//   - a 4-byte MPI_Allreduce vs MPI_Iallreduce completed by MPI_Test polling;
//   - a negotiation-like pair (a 3-word MPI_BAND Iallreduce, then the 4-byte op);
//   - a condition-variable round trip to a helper thread (the runtime's enqueue/complete
//     handoff) and that round trip with the pair above run on the helper thread;
//   - 1..64 MiB: blocking MPI_Allreduce (coll/tuned) vs MPI_Iallreduce (coll/libnbc) polled
//     in a tight loop vs polled the way ops/mpi/mpi_waiter.cc does (50 us busy, yielding up to
//     2 ms, then sleeps doubling from 20 us to 200 us with 1 us timer slack);
//   - 4..64 MiB allgather and alltoall: blocking into a reused buffer vs the non-blocking
//     (libnbc) v-variant the mpi backend posts, into a reused buffer and into a fresh
//     allocation per call (what the runtime does for its outputs), to separate libnbc from
//     page faults.
// Run it with the libnbc settings the runtime uses (-x OMPI_MCA_coll_libnbc_iallreduce_algorithm=3)
// to see what the runtime gets; the runtime sets that itself before MPI_Init.
// Thread-safety: the helper thread and the main thread never call MPI at the same time.
#include <mpi.h>
#include <sys/prctl.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <mutex>
#include <new>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

// Median over 15 blocks of `reps` calls (slowest rank per block), in microseconds per call.
double time_us(const std::function<void()>& call, int reps) {
  std::vector<double> samples;
  for (int block = 0; block < 15; ++block) {
    MPI_Barrier(MPI_COMM_WORLD);
    const auto start = Clock::now();
    for (int i = 0; i < reps; ++i) call();
    double us = std::chrono::duration<double, std::micro>(Clock::now() - start).count() / reps;
    double slowest = 0;
    MPI_Allreduce(&us, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    samples.push_back(slowest);
  }
  std::sort(samples.begin(), samples.end());
  return samples[samples.size() / 2];
}

void poll_tight(MPI_Request& request) {
  int done = 0;
  while (!done) MPI_Test(&request, &done, MPI_STATUS_IGNORE);
}

// The polling schedule of ops/mpi/mpi_waiter.cc (kept in step with it by hand).
void poll_with_backoff(MPI_Request& request) {
  const auto start = Clock::now();
  auto sleep = std::chrono::microseconds(20);
  for (;;) {
    int done = 0;
    MPI_Test(&request, &done, MPI_STATUS_IGNORE);
    if (done) return;
    const auto waited = Clock::now() - start;
    if (waited < std::chrono::microseconds(50)) continue;
    if (waited < std::chrono::microseconds(2000)) {
      std::this_thread::yield();
      continue;
    }
    prctl(PR_SET_TIMERSLACK, 1000UL, 0UL, 0UL, 0UL);
    std::this_thread::sleep_for(sleep);
    sleep = std::min(sleep * 2, std::chrono::microseconds(200));
  }
}

struct AlignedFree {
  void operator()(float* p) const { ::operator delete[](p, std::align_val_t(64)); }
};
// Uninitialised 64-byte aligned floats, as core/runtime/tensor.cc allocates runtime outputs.
std::unique_ptr<float[], AlignedFree> fresh_floats(size_t n) {
  return std::unique_ptr<float[], AlignedFree>(
      static_cast<float*>(::operator new[](n * sizeof(float), std::align_val_t(64))));
}

// allgather and alltoall of `mib` MiB of output per rank: blocking (reused output), the
// non-blocking v-variant into a reused output, and into a fresh output per call.
void gather_family(MPI_Comm comm, int mib, int size,
                   const std::function<void(const char*, double)>& print) {
  const size_t total = static_cast<size_t>(mib) << 18;  // floats in the whole output
  const int block = static_cast<int>(total / static_cast<size_t>(size));
  std::vector<float> in(total, 1.0f), out(total, 0.0f);
  std::vector<int> counts(static_cast<size_t>(size), block), displs(static_cast<size_t>(size));
  for (int p = 0; p < size; ++p) displs[static_cast<size_t>(p)] = p * block;
  auto iallgatherv = [&](float* dst) {
    MPI_Request request = MPI_REQUEST_NULL;
    MPI_Iallgatherv(in.data(), block, MPI_FLOAT, dst, counts.data(), displs.data(), MPI_FLOAT, comm,
                    &request);
    poll_with_backoff(request);
  };
  auto ialltoallv = [&](float* dst) {
    MPI_Request request = MPI_REQUEST_NULL;
    MPI_Ialltoallv(in.data(), counts.data(), displs.data(), MPI_FLOAT, dst, counts.data(),
                   displs.data(), MPI_FLOAT, comm, &request);
    poll_with_backoff(request);
  };
  char label[96];
  std::snprintf(label, sizeof label, "%d MiB MPI_Allgather, reused output", mib);
  print(label,
        time_us(
            [&] { MPI_Allgather(in.data(), block, MPI_FLOAT, out.data(), block, MPI_FLOAT, comm); },
            1));
  std::snprintf(label, sizeof label, "%d MiB MPI_Iallgatherv, reused output", mib);
  print(label, time_us([&] { iallgatherv(out.data()); }, 1));
  std::snprintf(label, sizeof label, "%d MiB MPI_Iallgatherv, fresh output per call", mib);
  print(label, time_us([&] { iallgatherv(fresh_floats(total).get()); }, 1));
  std::snprintf(label, sizeof label, "%d MiB MPI_Alltoall, reused output", mib);
  print(label,
        time_us(
            [&] { MPI_Alltoall(in.data(), block, MPI_FLOAT, out.data(), block, MPI_FLOAT, comm); },
            1));
  std::snprintf(label, sizeof label, "%d MiB MPI_Ialltoallv, reused output", mib);
  print(label, time_us([&] { ialltoallv(out.data()); }, 1));
  std::snprintf(label, sizeof label, "%d MiB MPI_Ialltoallv, fresh output per call", mib);
  print(label, time_us([&] { ialltoallv(fresh_floats(total).get()); }, 1));
}

void iallreduce(MPI_Comm comm, void* data, int count, MPI_Datatype type, MPI_Op op,
                void (*wait)(MPI_Request&)) {
  MPI_Request request = MPI_REQUEST_NULL;
  MPI_Iallreduce(MPI_IN_PLACE, data, count, type, op, comm, &request);
  wait(request);
}

// A helper thread that runs `work` when asked and answers through a condition variable, like
// the runtime's background thread between enqueue and handle completion.
class Helper {
 public:
  Helper() : thread_([this] { loop(); }) {}
  ~Helper() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    asked_.notify_one();
    thread_.join();
  }
  void call(std::function<void()> work) {
    std::unique_lock<std::mutex> lock(mutex_);
    work_ = std::move(work);
    pending_ = true;
    asked_.notify_one();
    answered_.wait(lock, [this] { return !pending_; });
  }

 private:
  void loop() {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      asked_.wait(lock, [this] { return pending_ || stop_; });
      if (stop_) return;
      work_();
      pending_ = false;
      answered_.notify_one();
    }
  }
  std::mutex mutex_;
  std::condition_variable asked_, answered_;
  std::function<void()> work_;
  bool pending_ = false;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm comm = MPI_COMM_NULL;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  auto print = [rank](const char* what, double us) {
    if (rank == 0) std::printf("%-56s %12.1f us\n", what, us);
  };
  float value = 0;
  uint64_t bits[3] = {~0ULL, ~0ULL, ~0ULL};
  auto negotiate_and_op = [&](void (*wait)(MPI_Request&)) {
    iallreduce(comm, bits, 3, MPI_UINT64_T, MPI_BAND, wait);
    iallreduce(comm, &value, 1, MPI_FLOAT, MPI_SUM, wait);
  };
  print("4 B MPI_Allreduce",
        time_us([&] { MPI_Allreduce(MPI_IN_PLACE, &value, 1, MPI_FLOAT, MPI_SUM, comm); }, 200));
  print("4 B MPI_Iallreduce, tight MPI_Test",
        time_us([&] { iallreduce(comm, &value, 1, MPI_FLOAT, MPI_SUM, poll_tight); }, 200));
  print("bit-vector Iallreduce + 4 B Iallreduce, tight",
        time_us([&] { negotiate_and_op(poll_tight); }, 200));
  {
    Helper helper;
    print("condvar round trip to a helper thread (no MPI)",
          time_us([&] { helper.call([] {}); }, 200));
    print("round trip + bit vector + 4 B op, backoff polling",
          time_us([&] { helper.call([&] { negotiate_and_op(poll_with_backoff); }); }, 200));
  }
  char label[96];
  for (int mib : {1, 4, 16, 64}) {
    std::vector<float> data(static_cast<size_t>(mib) << 18, 0.0f);
    const int n = static_cast<int>(data.size());
    std::snprintf(label, sizeof label, "%d MiB MPI_Allreduce (coll/tuned)", mib);
    print(
        label,
        time_us([&] { MPI_Allreduce(MPI_IN_PLACE, data.data(), n, MPI_FLOAT, MPI_SUM, comm); }, 2));
    std::snprintf(label, sizeof label, "%d MiB MPI_Iallreduce (libnbc), tight MPI_Test", mib);
    print(label,
          time_us([&] { iallreduce(comm, data.data(), n, MPI_FLOAT, MPI_SUM, poll_tight); }, 2));
    std::snprintf(label, sizeof label, "%d MiB MPI_Iallreduce (libnbc), backoff polling", mib);
    print(label,
          time_us([&] { iallreduce(comm, data.data(), n, MPI_FLOAT, MPI_SUM, poll_with_backoff); },
                  2));
  }
  int size = 1;
  MPI_Comm_size(comm, &size);
  for (int mib : {4, 16, 64}) gather_family(comm, mib, size, print);
  MPI_Comm_free(&comm);
  MPI_Finalize();
  return 0;
}
