#pragma once
// Why: the launcher must know when each rank started and how a rank ended (exit code, signal,
// or stopped because the job was being stopped) to enforce --start-timeout and to name the rank
// that failed. The rank shim writes one marker line per event to its stderr, which mpirun
// forwards (tagged) from every host; the launcher recognises and hides these lines. A rank's
// runtime adds why it failed, when a peer caused it (common/rank_events.h).
// Thread-safety: pure functions.

#include <optional>
#include <string>
#include <string_view>

#include "common/rank_events.h"

namespace runrun::launcher {

inline constexpr std::string_view kRankMarker = kRankEventMarker;

struct RankEvent {
  // kPeerLost/kPeerLeft: the rank's runtime failed because peer `value` was lost, or shut its
  // runtime down while this rank still ran ops. kPeerSilent: peer `value` stopped answering the
  // rank's peer monitor (stopped or hung), whether or not the rank failed because of it.
  // kInitFailed: the rank's init() failed for a reason of its own (a setting it refused).
  enum class Kind {
    kStarted,
    kExited,
    kSignaled,
    kStopped,
    kPeerLost,
    kPeerLeft,
    kPeerSilent,
    kInitFailed
  };
  Kind kind = Kind::kStarted;
  int rank = 0;
  int value = 0;  // exit code (kExited, kStopped), signal number (kSignaled) or the peer

  bool operator==(const RankEvent&) const = default;
};

// The marker line for `event` (newline-terminated). The marker is found anywhere in a line, so
// a partial line the user's program left before it survives as the line's rest.
std::string format_rank_event(const RankEvent& event);

// Finds a marker in `line`. On success returns the event and sets *rest to the line without the
// marker (what the user's program wrote before it, if anything).
std::optional<RankEvent> find_rank_event(std::string_view line, std::string* rest);

// "exit code 3", "signal 9 (Killed)", for messages.
std::string describe_rank_end(const RankEvent& event);

}  // namespace runrun::launcher
