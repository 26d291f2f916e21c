#include "common/rank_events.h"

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <string>

namespace runrun {

void report_failure_cause(FailureCause cause, int rank, int peer) {
  static std::atomic<bool> reported{false};
  if (std::getenv(kRankEventsEnv) == nullptr || rank < 0 || peer < 0 || peer == rank) return;
  if (reported.exchange(true)) return;
  // One write(2) of a whole line: not interleaved with other output, no stdio buffer.
  const std::string line = std::string(kRankEventMarker) +
                           (cause == FailureCause::kPeerLost ? " lost " : " left ") +
                           std::to_string(rank) + " " + std::to_string(peer) + "\n";
  const ssize_t written = write(STDERR_FILENO, line.data(), line.size());
  (void)written;  // nowhere to report a failed report to
}

}  // namespace runrun
