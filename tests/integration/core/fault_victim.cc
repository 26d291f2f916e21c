// A stream of allreduces in which one rank of the job dies (mode "kill": SIGKILL), hangs
// (mode "hang": SIGSTOP, and a watchdog process kills it 8 s later; mode "stop": SIGSTOP and
// nothing else, so that only the launcher can end it) or stops enqueueing while it stays
// healthy (mode "stall": busy in its own code). The others must see an error naming that rank
// — a lost peer, or a stall with RUNRUN_STALL_SHUTDOWN_TIME — print it and exit with status 3
// on their own, in bounded time. The backend comes from the environment as in a real job
// (RUNRUN_BACKEND, default auto: MPI under mpiexec, Gloo under `runrun --gloo`).
// Usage: fault_victim MODE [TOKEN] (TOKEN is ignored: the scripts find the job's processes by
// it). Driven by fault_test.sh (mpiexec) and fault_test_gloo.sh (runrun --gloo).
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "core/runtime/runtime.h"
#include "ops/backend_factory.h"

namespace {

constexpr int kVictim = 2;
constexpr int kStepsBeforeFailure = 20;

[[noreturn]] void fail_now(const char* mode) {
  std::fprintf(stderr, "rank %d: %s now\n", kVictim, mode);
  std::fflush(stderr);
  if (std::strcmp(mode, "stall") == 0) {  // alive and answering, but enqueues nothing more
    std::this_thread::sleep_for(std::chrono::seconds(12));
    _exit(0);
  }
  if (std::strcmp(mode, "stop") == 0) raise(SIGSTOP);
  if (std::strcmp(mode, "hang") == 0) {
    pid_t self = getpid();
    if (fork() == 0) {  // a watchdog that ends the stopped process once the test is over
      sleep(8);
      kill(self, SIGKILL);
      _exit(0);
    }
    raise(SIGSTOP);
  }
  raise(SIGKILL);
  _exit(99);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace runrun;
  const char* mode = argc > 1 ? argv[1] : "kill";
  const Config config = Config::load();
  BackendOptions backend;
  backend.name = config.backend;
  backend.collective_timeout = config.collective_timeout;
  Runtime rt(make_backend(backend), config);
  const int rank = rt.topology().rank;
  auto start = std::chrono::steady_clock::now();
  try {
    for (int step = 0;; ++step) {
      if (rank == kVictim && step == kStepsBeforeFailure) fail_now(mode);
      std::vector<float> x(1024, 1.0f);
      TensorView v{x.data(), DataType::kFloat32, {1024}};
      AllreduceOptions sum;
      sum.op = ReduceOp::kSum;
      auto handle = rt.allreduce("grad", v, v, sum);
      handle->wait();
      if (handle->code() != ErrorCode::kOk)
        throw_error(handle->code(), RUNRUN_WHERE, handle->error());
      if (x[0] != static_cast<float>(rt.topology().size)) {
        std::fprintf(stderr, "rank %d: wrong result %f\n", rank, static_cast<double>(x[0]));
        return 1;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  } catch (const Error& e) {
    if (e.code() != ErrorCode::kPeerFailure && e.code() != ErrorCode::kTimeout) throw;
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("rank %d: peer failure after %.1f s: %s\n", rank, seconds, e.what());
    std::fflush(stdout);
    rt.shutdown();
    std::printf("rank %d: exiting with status 3 over %s\n", rank,
                std::string(rt.backend_name()).c_str());
    std::fflush(stdout);
    return 3;
  } catch (const std::exception& e) {
    std::printf("rank %d: unexpected error: %s\n", rank, e.what());
    return 1;
  }
}
