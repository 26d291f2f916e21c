#pragma once
// Why: MPI's blocking calls busy-poll a core until they finish, which steals compute from the
// framework whenever ranks oversubscribe cores. Every collective of the mpi backend is posted
// non-blocking and completed here: poll MPI_Test, spinning only for the first ~50 us (small
// collectives finish inside that window, keeping their latency at raw MPI's), then sleeping with
// an interval that doubles from 8 us up to 1 ms. Each poll also checks the abort flag
// (ShutDownError) and the collective timeout (TimeoutError naming the op and the time waited).
// After a timeout or abort the posted request is abandoned (MPI cannot cancel a collective) and
// the backend is broken: every later call throws.
// Threading contract: wait()/check_usable() are called by the backend's one driving thread;
// abort() by any thread.

#include <mpi.h>

#include <atomic>
#include <chrono>
#include <string>

namespace runrun::mpi {

class MpiWaiter {
 public:
  MpiWaiter(int rank, std::chrono::milliseconds collective_timeout);

  // Throws ShutDownError after abort(), or the error that broke the backend, naming `op`.
  void check_usable(const char* op) const;

  // Completes `request` (posted by `op`), or throws as described above.
  void wait(MPI_Request& request, const char* op);

  void abort() { aborted_.store(true); }

 private:
  [[noreturn]] void fail_timeout(const char* op, std::chrono::steady_clock::duration waited);

  int rank_;
  std::chrono::milliseconds timeout_;
  std::atomic<bool> aborted_{false};
  std::string broken_;  // set by a timeout; later calls throw TimeoutError with it
};

}  // namespace runrun::mpi
