#pragma once
// Why: MPI's blocking calls busy-poll a core until they finish, which steals compute from the
// framework whenever ranks oversubscribe cores. Every collective of the mpi backend (and of its
// control channel) is posted non-blocking and completed here, by polling MPI_Testall (Open MPI
// progresses non-blocking collectives only inside MPI calls): wait() for one request at once,
// test()/wait_until() for an MpiCompletion's requests whenever its caller chooses. Pacing,
// measured from the start of each wait: busy polling for the first 50 us (small collectives
// finish inside that window, keeping their latency at raw MPI's), then
// std::this_thread::yield() between polls until 2 ms, then sleeps between polls that start at
// 20 us and double up to 200 us (the thread's timer slack is lowered to 1 us before its first
// sleep, best effort, so that short sleeps stay short). A poll that finds the requests complete
// returns at once, even after abort(). After a poll that does not: abort() seen ->
// ShutDownError; an earlier timeout or abandonment -> that error again; more than the
// collective timeout (when it is not 0) since the requests were posted (since wait() began, for
// wait()) -> TimeoutError naming the op, the rank, the time waited and the timeout, and the
// waiter stays broken. An error code from MPI_Testall throws PeerFailureError (mpi_check.h).
// After an abort, a timeout or abandon() (a completion destroyed unwaited) the posted requests
// are left pending, neither freed nor cancelled (MPI cannot cancel a collective); the state is
// never cleared, and check_usable(), which the backend calls before posting an op, throws from
// then on.
// Threading contract: everything but abort() is called by the backend's (or control channel's)
// one driving thread; abort() by any thread (an atomic flag, seen at the next poll).

#include <mpi.h>

#include <atomic>
#include <chrono>
#include <string>
#include <vector>

#include "ops/mpi/mpi_lifetime.h"

namespace runrun::mpi {

class MpiWaiter {
 public:
  MpiWaiter(int rank, std::chrono::milliseconds collective_timeout);

  // Throws ShutDownError after abort(), or the error that broke the backend, naming `op`.
  void check_usable(const char* op) const;

  using Clock = std::chrono::steady_clock;

  // Completes `request` (posted by `op`), or throws as described above (the request is then
  // left pending).
  void wait(MPI_Request& request, const char* op);

  // Throws as a failed test() would (abort, earlier failure, or more than the collective
  // timeout since `posted`): for waits on something other than MPI requests.
  void check_alive(const char* op, Clock::time_point posted);

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

  // A helper thread given up on is still inside an MPI call on this waiter's communicator
  // (mpi_member_comm.h): the owner must not free the communicator (it leaks it instead), and
  // MPI_Finalize is skipped at exit. Driving thread only.
  void abandon_helper() {
    helper_abandoned_ = true;
    skip_finalize_at_exit();
  }
  bool communicator_in_use() const { return helper_abandoned_; }

 private:
  [[noreturn]] void fail_timeout(const char* op, Clock::duration waited);

  int rank_;
  std::chrono::milliseconds timeout_;
  std::atomic<bool> aborted_{false};
  bool helper_abandoned_ = false;
  std::string broken_;  // set by a timeout (driving thread); later calls throw TimeoutError with it
};

}  // namespace runrun::mpi
