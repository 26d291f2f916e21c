#pragma once
// Why: MPI's blocking calls busy-poll a core until they finish, which steals compute from the
// framework whenever ranks oversubscribe cores. Every collective of the mpi backend is posted
// non-blocking and completed here: poll MPI_Test, spinning only for the first ~50 us (small
// collectives finish inside that window, keeping their latency at raw MPI's), then sleeping with
// an interval that doubles from 8 us up to 1 ms. Each poll also checks the abort flag
// (ShutDownError) and the collective timeout (TimeoutError naming the op and the time waited).
// After a timeout or abort the posted request is abandoned (MPI cannot cancel a collective) and
// the backend is broken: every later call throws.
// The same loop completes MpiCompletion (a backend collective's posted requests, waited for
// whenever its caller chooses); the collective timeout is counted from when the requests were
// posted.
// Threading contract: everything but abort() is called by the backend's (or control channel's)
// one driving thread; abort() by any thread.

#include <mpi.h>

#include <atomic>
#include <chrono>
#include <string>
#include <vector>

namespace runrun::mpi {

class MpiWaiter {
 public:
  MpiWaiter(int rank, std::chrono::milliseconds collective_timeout);

  // Throws ShutDownError after abort(), or the error that broke the backend, naming `op`.
  void check_usable(const char* op) const;

  using Clock = std::chrono::steady_clock;

  // Completes `request` (posted by `op`), or throws as described above.
  void wait(MPI_Request& request, const char* op);

  // One test of `requests` (posted by `op` at `posted`): true when all completed; throws on
  // abort, the collective timeout or an MPI error. Never blocks.
  bool test(std::vector<MPI_Request>& requests, const char* op, Clock::time_point posted);

  // Tests `requests` with the polite back-off until they completed (true) or `until` passed
  // (false); throws as test().
  bool wait_until(std::vector<MPI_Request>& requests, const char* op, Clock::time_point posted,
                  Clock::time_point until);

  // `op`'s requests were given up on unfinished (their completion was destroyed): MPI cannot
  // take them back, so the backend is unusable from now on.
  void abandon(const char* op);

  void abort() { aborted_.store(true); }

 private:
  [[noreturn]] void fail_timeout(const char* op, Clock::duration waited);

  int rank_;
  std::chrono::milliseconds timeout_;
  std::atomic<bool> aborted_{false};
  std::string broken_;  // set by a timeout; later calls throw TimeoutError with it
};

}  // namespace runrun::mpi
