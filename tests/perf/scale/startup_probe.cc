// runrun_startup_probe: one rank's start-up, for tests/perf/scale/startup_bench.sh. Run under the
// launcher (`runrun --gloo -np N runrun_startup_probe`): it times runrun_init (wall clock, so the
// bench can take the slowest rank against its own launch time), counts the sockets it holds
// after init and after one barrier (socket_census.h), and prints one line:
//
//   startup_probe rank R size N main_ms M init_return_ms T init_ms I after_init E/L/O/X
//   after_barrier E/L/O/X
//
// (M, T: milliseconds since the epoch; E/L/O/X: established TCP, listening TCP, TCP in another
// state, other sockets). Exit status 0 when init, the barrier and shutdown succeeded.
#include <runrun/c_api.h>

#include <chrono>
#include <cstdio>
#include <string>

#include "socket_census.h"

namespace {

long long epoch_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

bool ok(runrun_status status, const char* call) {
  if (status == RUNRUN_OK) return true;
  std::fprintf(stderr, "%s failed (status %d): %s\n", call, static_cast<int>(status),
               runrun_last_error());
  return false;
}

std::string census_text(const runrun::perf::SocketCensus& c) {
  return std::to_string(c.tcp_established) + "/" + std::to_string(c.tcp_listening) + "/" +
         std::to_string(c.tcp_other) + "/" + std::to_string(c.other);
}

}  // namespace

int main() {
  const long long main_ms = epoch_ms();
  const auto start = std::chrono::steady_clock::now();
  runrun_runtime* rt = nullptr;
  if (!ok(runrun_init(nullptr, &rt), "runrun_init")) return 1;
  const double init_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  const long long init_return_ms = epoch_ms();
  const auto after_init = runrun::perf::count_own_sockets();
  runrun_topology topo{};
  bool good = ok(runrun_get_topology(rt, &topo), "runrun_get_topology");
  runrun_handle* barrier = nullptr;
  if (good) good = ok(runrun_barrier(rt, 0, &barrier), "runrun_barrier");
  if (good) {
    good = ok(runrun_handle_wait(barrier, 600.0), "waiting for runrun_barrier");
    runrun_handle_release(barrier);
  }
  const auto after_barrier = runrun::perf::count_own_sockets();
  if (good) {
    std::printf(
        "startup_probe rank %d size %d main_ms %lld init_return_ms %lld init_ms %.1f "
        "after_init %s after_barrier %s\n",
        topo.rank, topo.size, main_ms, init_return_ms, init_ms, census_text(after_init).c_str(),
        census_text(after_barrier).c_str());
    std::fflush(stdout);
  }
  const bool stopped = ok(runrun_shutdown(rt), "runrun_shutdown");
  runrun_destroy(rt);
  return good && stopped ? 0 : 1;
}
