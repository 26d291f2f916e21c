#include "common/rank_events.h"

#include <unistd.h>

#include <cstdlib>
#include <mutex>
#include <set>
#include <string>
#include <utility>

namespace runrun {
namespace {

// Read when the library loads: the report comes from the monitor thread, and reading the
// environment there could race with the framework changing it.
const bool g_launcher_reads_events = std::getenv(kRankEventsEnv) != nullptr;

const char* cause_word(FailureCause cause) {
  switch (cause) {
    case FailureCause::kPeerLost:
      return " lost ";
    case FailureCause::kPeerLeft:
      return " left ";
    case FailureCause::kPeerSilent:
      return " silent ";
  }
  return " ? ";
}

// One write(2) of a whole line: not interleaved with other output, no stdio buffer.
void write_marker_line(const char* kind, int rank, int value) {
  const std::string line = std::string(kRankEventMarker) + kind + std::to_string(rank) + " " +
                           std::to_string(value) + "\n";
  const ssize_t written = write(STDERR_FILENO, line.data(), line.size());
  (void)written;  // nowhere to report a failed report to
}

}  // namespace

void report_failure_cause(FailureCause cause, int rank, int peer) {
  if (!g_launcher_reads_events || rank < 0 || peer < 0 || peer == rank) return;
  {
    static std::mutex mutex;
    static std::set<std::pair<int, int>> reported;  // (cause, peer); bounded by the job size
    std::lock_guard<std::mutex> lock(mutex);
    if (!reported.emplace(static_cast<int>(cause), peer).second) return;
  }
  write_marker_line(cause_word(cause), rank, peer);
}

void report_init_failure(int rank) {
  if (!g_launcher_reads_events) return;
  if (rank < 0) {
    const char* text = std::getenv("RUNRUN_RANK");
    rank = text != nullptr && *text != '\0' ? std::atoi(text) : -1;
  }
  if (rank >= 0) write_marker_line(" initfailed ", rank, 0);
}

}  // namespace runrun
