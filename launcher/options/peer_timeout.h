#pragma once
// Why: the launcher needs the ranks' RUNRUN_PEER_TIMEOUT in two places (mpirun's keepalive
// settings, and how long a failed rank's shim gives Open MPI's daemon, daemon_reaper.h); both
// read it the way the ranks do, so the rule lives here once.
// Thread-safety: a pure function.

namespace runrun::launcher {

// RUNRUN_PEER_TIMEOUT's `text` in seconds (>= 0; 0: monitoring off): its default (30) when
// `text` is null or empty, or a value the ranks would refuse (not a number, negative, infinite,
// over 1e6 s).
double peer_timeout_seconds(const char* text);

}  // namespace runrun::launcher
