// A real rank program for the launcher's end-to-end and multi-host tests, written against the
// public C API. It prints one line per rank:
//   PROBE rank=R size=S local_rank=.. local_size=.. cross_rank=.. cross_size=.. netns=..
//         host=.. allreduce=ok
//   TOPOLOGY rank=R homogeneous=0|1
// after checking that the RUNRUN_* variables the launcher set agree with the runtime's own
// topology and that an allreduce across every rank gives the exact expected sums.
// Modes for failure tests:
//   --exit-rank R CODE   rank R exits with CODE right after init; the others wait in an
//                        allreduce that can never complete (the launcher must stop them)
//   --ready-and-wait     print "PROBE ready rank=R" and wait in such an allreduce forever
//   --stop-rank R SECS   rank R stops itself (SIGSTOP) right after init; the others sleep SECS
//                        (past RUNRUN_PEER_TIMEOUT), shut down and exit 0
//   --allreduce-loop     print "PROBE looping rank=R", then allreduce and check for ever (until
//                        a lost peer fails the allreduce: the probe then exits 1)
//   --chatter            with --allreduce-loop: a thread prints a line every 20 ms, whether or
//                        not the allreduces go on (a rank that logs while its host's link is
//                        cut, so that its output is in flight on Open MPI's connections)
// --steps N: then N training-like steps of three allreduces of different sizes (one above the
// smallest fusion thresholds), each checked exactly (the autotune test's workload).
// Any other argument (e.g. --token XYZ, used by tests to find stray processes) is ignored.
#include <runrun/c_api.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

[[noreturn]] void die(const char* what, const std::string& detail) {
  std::fprintf(stderr, "PROBE FAILED: %s: %s\n", what, detail.c_str());
  std::exit(1);
}

void check(runrun_status status, const char* what) {
  if (status != RUNRUN_OK) die(what, runrun_last_error());
}

int env_int(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr) die("environment", std::string(name) + " is not set by the launcher");
  return std::atoi(value);
}

std::string net_namespace() {
  char link[128] = {};
  const ssize_t n = readlink("/proc/self/ns/net", link, sizeof(link) - 1);
  return n > 0 ? std::string(link, static_cast<size_t>(n)) : "unknown";
}

DLTensor float_tensor(std::vector<float>& data) {
  static int64_t shape[1];
  shape[0] = static_cast<int64_t>(data.size());
  DLTensor tensor{};
  tensor.data = data.data();
  tensor.device = {kDLCPU, 0};
  tensor.ndim = 1;
  tensor.dtype = {kDLFloat, 32, 1};
  tensor.shape = shape;
  return tensor;
}

// Sum over ranks of (r + 1) * (i + 1), element i; exact in float for these sizes.
void allreduce_and_check(runrun_runtime* rt, const runrun_topology& t) {
  std::vector<float> data(1024);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<float>((t.rank + 1) * (i + 1));
  DLTensor tensor = float_tensor(data);
  runrun_allreduce_options options = runrun_allreduce_default_options();
  options.op = RUNRUN_OP_SUM;
  runrun_handle* handle = nullptr;
  check(runrun_allreduce(rt, "probe.sum", &tensor, &tensor, &options, &handle), "allreduce");
  if (runrun_handle_wait(handle, -1) != RUNRUN_OK) die("allreduce", runrun_handle_error(handle));
  runrun_handle_release(handle);
  const long long ranks_sum = static_cast<long long>(t.size) * (t.size + 1) / 2;
  for (size_t i = 0; i < data.size(); ++i) {
    const float expected = static_cast<float>(ranks_sum * static_cast<long long>(i + 1));
    if (data[i] != expected) {
      die("allreduce", "element " + std::to_string(i) + " is " + std::to_string(data[i]) +
                           ", expected " + std::to_string(expected));
    }
  }
}

// Enqueues an allreduce of `data` that one rank never joins.
runrun_handle* enqueue_never_joined(runrun_runtime* rt, std::vector<float>& data) {
  DLTensor tensor = float_tensor(data);
  runrun_allreduce_options options = runrun_allreduce_default_options();
  runrun_handle* handle = nullptr;
  check(runrun_allreduce(rt, "probe.never", &tensor, &tensor, &options, &handle), "allreduce");
  return handle;
}

// Blocks in an allreduce that `missing_rank` never joins. When that rank exits, the runtime's
// peer monitor fails the allreduce (lost peer): the probe then keeps running anyway, like a
// program that ignores the error, so that stopping it is left to the launcher under test.
[[noreturn]] void wait_forever(runrun_runtime* rt) {
  std::vector<float> data(4, 1.0f);
  runrun_handle* handle = enqueue_never_joined(rt, data);
  if (runrun_handle_wait(handle, -1) == RUNRUN_PEER_FAILURE) {
    std::fprintf(stderr, "PROBE lost a peer, waits for the launcher: %s\n",
                 runrun_handle_error(handle));
    for (;;) pause();
  }
  die("wait_forever", std::string("the allreduce ended: ") + runrun_handle_error(handle));
}

// `steps` steps of three allreduces enqueued together, waited for, and checked exactly.
void steps_and_check(runrun_runtime* rt, const runrun_topology& t, int steps) {
  const int64_t sizes[3] = {300000, 1000, 70000};
  const long long ranks_sum = static_cast<long long>(t.size) * (t.size + 1) / 2;
  runrun_allreduce_options options = runrun_allreduce_default_options();
  options.op = RUNRUN_OP_SUM;
  for (int step = 0; step < steps; ++step) {
    std::vector<float> data[3];
    int64_t shapes[3][1];
    runrun_handle* handles[3] = {};
    for (int k = 0; k < 3; ++k) {
      data[k].resize(static_cast<size_t>(sizes[k]));
      for (size_t i = 0; i < data[k].size(); ++i) {
        data[k][i] = static_cast<float>((t.rank + 1) * static_cast<int>(i % 1000 + step));
      }
      shapes[k][0] = sizes[k];
      DLTensor tensor{};
      tensor.data = data[k].data();
      tensor.device = {kDLCPU, 0};
      tensor.ndim = 1;
      tensor.dtype = {kDLFloat, 32, 1};
      tensor.shape = shapes[k];
      const std::string name = "probe.step" + std::to_string(step) + "." + std::to_string(k);
      check(runrun_allreduce(rt, name.c_str(), &tensor, &tensor, &options, &handles[k]),
            "allreduce");
    }
    for (int k = 0; k < 3; ++k) {
      if (runrun_handle_wait(handles[k], -1) != RUNRUN_OK) {
        die("allreduce", runrun_handle_error(handles[k]));
      }
      runrun_handle_release(handles[k]);
      for (size_t i = 0; i < data[k].size(); ++i) {
        const auto expected =
            static_cast<float>(ranks_sum * static_cast<long long>(i % 1000 + step));
        if (data[k][i] != expected) {
          die("allreduce", "step " + std::to_string(step) + " tensor " + std::to_string(k) +
                               " element " + std::to_string(i) + " is " +
                               std::to_string(data[k][i]) + ", expected " +
                               std::to_string(expected));
        }
      }
    }
  }
}

}  // namespace

// The culprit of a failure that its peers see first: it shuts its runtime down while they wait
// in an allreduce it never joins, and exits with `exit_code` only later. They fail at once
// (exit 1, as a script whose exception propagates), before it.
[[noreturn]] void shut_down_then_exit(runrun_runtime* rt, int exit_code) {
  check(runrun_shutdown(rt), "runrun_shutdown");
  std::fprintf(stderr, "PROBE shut down, exits with %d in 2 s\n", exit_code);
  std::fflush(stderr);
  sleep(2);
  std::_Exit(exit_code);
}

[[noreturn]] void fail_in_allreduce(runrun_runtime* rt) {
  std::vector<float> data(4, 1.0f);
  runrun_handle* handle = enqueue_never_joined(rt, data);
  if (runrun_handle_wait(handle, -1) != RUNRUN_OK) die("allreduce", runrun_handle_error(handle));
  die("fail_in_allreduce", "the allreduce succeeded");
}

namespace {

struct Options {
  int exit_rank = -1, exit_code = 0, shutdown_rank = -1, stop_rank = -1, stop_wait_s = 0;
  bool ready_and_wait = false, allreduce_loop = false, chatter = false;
  int steps = 0;
};

Options parse_options(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--exit-rank") == 0 && i + 2 < argc) {
      o.exit_rank = std::atoi(argv[i + 1]);
      o.exit_code = std::atoi(argv[i + 2]);
      i += 2;
    } else if (std::strcmp(argv[i], "--shutdown-exit-rank") == 0 && i + 2 < argc) {
      o.shutdown_rank = std::atoi(argv[i + 1]);
      o.exit_code = std::atoi(argv[i + 2]);
      i += 2;
    } else if (std::strcmp(argv[i], "--stop-rank") == 0 && i + 2 < argc) {
      o.stop_rank = std::atoi(argv[i + 1]);
      o.stop_wait_s = std::atoi(argv[i + 2]);
      i += 2;
    } else if (std::strcmp(argv[i], "--steps") == 0 && i + 1 < argc) {
      o.steps = std::atoi(argv[++i]);
    } else if (std::strcmp(argv[i], "--ready-and-wait") == 0) {
      o.ready_and_wait = true;
    } else if (std::strcmp(argv[i], "--allreduce-loop") == 0) {
      o.allreduce_loop = true;
    } else if (std::strcmp(argv[i], "--chatter") == 0) {
      o.chatter = true;
    }
  }
  return o;
}

[[noreturn]] void ready_and_wait(runrun_runtime* rt, const runrun_topology& t) {
  std::printf("PROBE ready rank=%d\n", t.rank);
  std::fflush(stdout);
  if (t.rank == 0) wait_forever(rt);  // rank 0 in a collective, the others sleeping
  for (;;) pause();
}

[[noreturn]] void allreduce_loop(runrun_runtime* rt, const runrun_topology& t, bool chatter) {
  allreduce_and_check(rt, t);
  std::printf("PROBE looping rank=%d\n", t.rank);
  std::fflush(stdout);
  if (chatter) {
    std::thread([rank = t.rank] {
      for (long line = 1;; ++line) {
        std::printf("PROBE chatter %ld rank=%d\n", line, rank);
        std::fflush(stdout);
        usleep(20000);
      }
    }).detach();
  }
  for (;;) {
    allreduce_and_check(rt, t);
    usleep(20000);
  }
}

// Rank `stop_rank` stops itself; the others sleep past the peer timeout. Exit code 0 either way.
int stop_one_rank(runrun_runtime* rt, const runrun_topology& t, int stop_rank, int stop_wait_s) {
  if (t.rank == stop_rank) {
    std::fprintf(stderr, "PROBE rank %d stops itself\n", t.rank);
    raise(SIGSTOP);
  } else {
    sleep(static_cast<unsigned>(stop_wait_s));
  }
  runrun_shutdown(rt);  // fails (a peer is lost): the exit code stays 0 on purpose
  runrun_destroy(rt);
  return 0;
}

void check_launcher_environment(const runrun_topology& t) {
  const int expected[6] = {t.rank, t.size, t.local_rank, t.local_size, t.cross_rank, t.cross_size};
  const char* names[6] = {"RUNRUN_RANK",       "RUNRUN_SIZE",       "RUNRUN_LOCAL_RANK",
                          "RUNRUN_LOCAL_SIZE", "RUNRUN_CROSS_RANK", "RUNRUN_CROSS_SIZE"};
  for (int k = 0; k < 6; ++k) {
    if (env_int(names[k]) != expected[k]) {
      die("topology", std::string(names[k]) + "=" + std::getenv(names[k]) +
                          " but the runtime says " + std::to_string(expected[k]));
    }
  }
}

void print_probe(const runrun_topology& t) {
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  std::printf(
      "PROBE rank=%d size=%d local_rank=%d local_size=%d cross_rank=%d cross_size=%d "
      "netns=%s host=%s allreduce=ok\n",
      t.rank, t.size, t.local_rank, t.local_size, t.cross_rank, t.cross_size,
      net_namespace().c_str(), host);
  std::printf("TOPOLOGY rank=%d homogeneous=%d\n", t.rank, t.homogeneous);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse_options(argc, argv);
  runrun_runtime* rt = nullptr;
  check(runrun_init(nullptr, &rt), "runrun_init");
  runrun_topology t{};
  check(runrun_get_topology(rt, &t), "runrun_get_topology");
  if (o.ready_and_wait) ready_and_wait(rt, t);
  if (o.allreduce_loop) allreduce_loop(rt, t, o.chatter);
  if (o.stop_rank >= 0) return stop_one_rank(rt, t, o.stop_rank, o.stop_wait_s);
  if (o.shutdown_rank >= 0) {
    if (t.rank == o.shutdown_rank) shut_down_then_exit(rt, o.exit_code);
    fail_in_allreduce(rt);
  }
  if (t.rank == o.exit_rank) {
    std::fprintf(stderr, "PROBE rank %d exits with %d on purpose\n", t.rank, o.exit_code);
    std::_Exit(o.exit_code);
  }
  if (o.exit_rank >= 0) wait_forever(rt);
  check_launcher_environment(t);
  allreduce_and_check(rt, t);
  steps_and_check(rt, t, o.steps);
  print_probe(t);
  check(runrun_shutdown(rt), "runrun_shutdown");
  runrun_destroy(rt);
  return 0;
}
