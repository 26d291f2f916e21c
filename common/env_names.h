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
// The index of this rank's host in the launcher's host list: ranks with the same index share a
// host (backends that learn local/cross ranks by themselves, Gloo's, use it as the host's
// identity; host names cannot be trusted to differ, e.g. containers with one name).
inline constexpr const char* kHostIndex = "RUNRUN_HOST_INDEX";
// How the launcher started the job: "mpi" (mpirun) or "gloo" (the launcher itself, with a
// rendezvous server). RUNRUN_BACKEND=auto picks the backend of the same name.
inline constexpr const char* kController = "RUNRUN_CONTROLLER";
// --network-interface as the user gave it (interface names or CIDR blocks, commas): the
// addresses a Gloo rank listens on for its peers. Absent: the address this host reaches the
// rendezvous server from.
inline constexpr const char* kNetworkInterface = "RUNRUN_NETWORK_INTERFACE";

// 0 turns off the gloo backend's shared-memory path for ranks of one host (ops/shm; default 1:
// on). docs/backends.md, "Shared memory inside a host".
inline constexpr const char* kGlooShm = "RUNRUN_GLOO_SHM";
// 1 makes that path's large allreduce read its peers' buffers directly where the kernel permits
// it (process_vm_readv); default 0: copy through the shared slots (measured faster).
inline constexpr const char* kGlooShmSingleCopy = "RUNRUN_GLOO_SHM_SINGLE_COPY";
// The gloo backend's algorithm for each collective between hosts (docs/configuration.md): auto
// (default: by size and rank count, ops/algorithms/algorithm_choice.h) or one forced.
// Allreduce: direct, recursive_doubling or halving_doubling.
inline constexpr const char* kGlooAllreduce = "RUNRUN_GLOO_ALLREDUCE";
// Allgather: direct, bruck or ring.
inline constexpr const char* kGlooAllgather = "RUNRUN_GLOO_ALLGATHER";
// Broadcast: direct, binomial_tree or scatter_allgather.
inline constexpr const char* kGlooBroadcast = "RUNRUN_GLOO_BROADCAST";
// Reducescatter: direct, recursive_doubling or ring.
inline constexpr const char* kGlooReducescatter = "RUNRUN_GLOO_REDUCESCATTER";

// The job's rendezvous server (rendezvous/server.h), set by the launcher for every rank. The
// secret is 64 hex digits; the launcher never prints it, it is withheld from mpirun's
// environment forwarding (its name contains SECRET), and the rank reads it once and removes it
// from its environment (rendezvous/client_environment.h). docs/launcher.md, "Rendezvous and its
// secret".
inline constexpr const char* kRendezvousAddr = "RUNRUN_RENDEZVOUS_ADDR";
inline constexpr const char* kRendezvousPort = "RUNRUN_RENDEZVOUS_PORT";
inline constexpr const char* kRendezvousSecret = "RUNRUN_RENDEZVOUS_SECRET";

// Elastic training (docs/elastic.md), set by the launcher's elastic driver for every worker it
// starts: the worker's id (stable while the process lives; its rank changes per generation) and
// the seconds a worker waits for a generation that includes it (--elastic-timeout).
inline constexpr const char* kElasticWorker = "RUNRUN_ELASTIC_WORKER";
inline constexpr const char* kElasticTimeout = "RUNRUN_ELASTIC_TIMEOUT";

// Paths that override the run-time search for the CUDA runtime and NCCL (ops/cuda/
// library_search.h; docs/gpu.md): when set, that file is used or the GPU path fails.
inline constexpr const char* kCudartLibrary = "RUNRUN_CUDART_LIBRARY";
inline constexpr const char* kNcclLibrary = "RUNRUN_NCCL_LIBRARY";

// `runrun --profile` (docs/profiling.md; read by runrun.common.profile in every rank): on,
// print the table every N steps, JSON lines file (rank 0), and the link bandwidth in Gbit/s the
// launcher measured for the job (a quick --check-network; absent on one host).
inline constexpr const char* kProfile = "RUNRUN_PROFILE";
inline constexpr const char* kProfileInterval = "RUNRUN_PROFILE_INTERVAL";
inline constexpr const char* kProfileOutput = "RUNRUN_PROFILE_OUTPUT";
inline constexpr const char* kProfileLinkGbit = "RUNRUN_PROFILE_LINK_GBIT";

// runrun.jax inside jax.jit (docs/jax.md; read by runrun.jax.ffi_ops, not by the runtime):
// `ffi` (default) the native XLA FFI custom call, `callback` one ordered io_callback per op.
inline constexpr const char* kJaxJitPath = "RUNRUN_JAX_JIT_PATH";

// Prefix of every runtime knob; the launcher forwards every variable that starts with it.
inline constexpr const char* kPrefix = "RUNRUN_";

}  // namespace runrun::env
