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

// The job's rendezvous server (rendezvous/server.h), set by the launcher for every rank. The
// secret is 64 hex digits; the launcher never prints it, it is withheld from mpirun's
// environment forwarding (its name contains SECRET), and the rank reads it once and removes it
// from its environment (rendezvous/client_environment.h). docs/launcher.md, "Rendezvous and its
// secret".
inline constexpr const char* kRendezvousAddr = "RUNRUN_RENDEZVOUS_ADDR";
inline constexpr const char* kRendezvousPort = "RUNRUN_RENDEZVOUS_PORT";
inline constexpr const char* kRendezvousSecret = "RUNRUN_RENDEZVOUS_SECRET";

// Prefix of every runtime knob; the launcher forwards every variable that starts with it.
inline constexpr const char* kPrefix = "RUNRUN_";

}  // namespace runrun::env
