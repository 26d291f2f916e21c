#pragma once
// Why: the environment variables a launcher sets and the runtime reads are named once, here, so
// the launcher (which links nothing else of core) and the runtime cannot drift apart.
// Thread-safety: constants.

namespace runrun::env {

// Topology, set by the `runrun` launcher (or read from Open MPI's OMPI_COMM_WORLD_* otherwise).
inline constexpr const char* kRank = "RUNRUN_RANK";
inline constexpr const char* kSize = "RUNRUN_SIZE";
inline constexpr const char* kLocalRank = "RUNRUN_LOCAL_RANK";
inline constexpr const char* kLocalSize = "RUNRUN_LOCAL_SIZE";
inline constexpr const char* kCrossRank = "RUNRUN_CROSS_RANK";
inline constexpr const char* kCrossSize = "RUNRUN_CROSS_SIZE";

// Prefix of every runtime knob; the launcher forwards every variable that starts with it.
inline constexpr const char* kPrefix = "RUNRUN_";

}  // namespace runrun::env
