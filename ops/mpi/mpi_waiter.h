#pragma once
// Why: MPI's blocking calls busy-poll a core until they finish, which steals compute from the
// framework whenever ranks oversubscribe cores. Every collective of the mpi backend (and of its
// control channel) is posted non-blocking and completed by wait(), which polls MPI_Test (Open
// MPI progresses non-blocking collectives only inside MPI calls). Pacing, measured from the
// start of each wait(): busy polling for the first 50 us (small collectives finish inside that
// window, keeping their latency at raw MPI's), then std::this_thread::yield() between polls
// until 2 ms, then sleeps between polls that start at 20 us and double up to 200 us (the
// thread's timer slack is lowered to 1 us before its first sleep, best effort, so that short
// sleeps stay short). A poll that finds the request complete returns at once, even after
// abort(). After a poll that does not: abort() seen -> ShutDownError; an earlier timeout ->
// TimeoutError; more than the collective timeout since this wait() began (when it is not 0)
// -> TimeoutError naming the op, the rank, the time waited and the timeout, and the waiter
// stays broken. The timeout bounds one posted request, not an op: an op posted in chunks may
// take longer in all. An error code from MPI_Test throws PeerFailureError (mpi_check.h).
// After an abort or a timeout the posted request is abandoned, neither freed nor cancelled (MPI
// cannot cancel a collective); neither state is ever cleared, and check_usable(), which the
// backend calls before posting an op, throws from then on.
// Threading contract: wait()/check_usable() are called by the backend's one driving thread;
// abort() by any thread (an atomic flag, seen at the next poll).

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

  // Completes `request` (posted by `op`), or throws as described above (the request is then
  // left pending).
  void wait(MPI_Request& request, const char* op);

  void abort() { aborted_.store(true); }

 private:
  [[noreturn]] void fail_timeout(const char* op, std::chrono::steady_clock::duration waited);

  int rank_;
  std::chrono::milliseconds timeout_;
  std::atomic<bool> aborted_{false};
  std::string broken_;  // set by a timeout (driving thread); later calls throw TimeoutError with it
};

}  // namespace runrun::mpi
