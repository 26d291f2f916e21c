#pragma once
// Why: the launcher names the rank that made a job fail. A rank whose runtime fails because of
// a peer (the peer was lost, or shut its runtime down while this rank still ran ops) usually
// exits first, a moment before the peer itself, so the first exit is often the wrong rank to
// name. The rank's runtime tells the launcher why it failed with a marker line on its stderr:
// the same channel the rank shim reports starts and exits on (launcher/processes/rank_report.h),
// which
// the launcher recognises and hides.
// Thread-safety: any thread; each (cause, peer) is reported once per process, and the launcher
// weighs them (a peer that failed itself is the cause to name).

#include <string_view>

namespace runrun {

// Starts every marker line; what follows is "<kind> <rank> <value>".
inline constexpr std::string_view kRankEventMarker = "@@runrun-rank-event@@";
// Set (to 1) by the rank shim: a launcher reads this rank's stderr for markers.
inline constexpr const char* kRankEventsEnv = "RUNRUN_RANK_EVENTS";

// kPeerLost: this rank failed because the peer was lost; kPeerLeft: because the peer shut its
// runtime down; kPeerSilent: the peer stopped answering (reported also while this rank shuts
// down: a stopped or hung peer can outlive every other rank, and the launcher must stop it).
enum class FailureCause { kPeerLost, kPeerLeft, kPeerSilent };

// Writes "<marker> lost|left|silent <rank> <peer>" to stderr when a launcher reads markers (once
// per cause and peer).
void report_failure_cause(FailureCause cause, int rank, int peer);

// Writes "<marker> initfailed <rank> 0" to stderr when a launcher reads markers: this rank's
// init() failed for a reason of its own (a setting it refused), not because of a peer. The
// launcher names it and stops the job as soon as the rank has exited (docs/launcher.md).
// `rank` < 0: the rank is not known yet; RUNRUN_RANK (set by the rank shim) is used.
void report_init_failure(int rank);

}  // namespace runrun
