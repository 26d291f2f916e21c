#pragma once
// Why: every tunable of the runtime is declared exactly once, here: its environment variable,
// its default and a one-line doc. core/runtime/config.cc reads them, the launcher maps its flags
// onto
// them, and docs/configuration.md lists them (tests/unit checks the doc names every knob).
// Thread-safety: constants.

#include <array>
#include <string_view>

namespace runrun {

struct Knob {
  std::string_view env_name;
  std::string_view default_value;
  std::string_view doc;
};

namespace knobs {
inline constexpr Knob kLogLevel{"RUNRUN_LOG_LEVEL", "warn",
                                "log level: trace, debug, info, warn, error, critical, off"};
inline constexpr Knob kBackend{
    "RUNRUN_BACKEND", "auto",
    "data backend: auto (gloo under `runrun --gloo`, else mpi), mpi, gloo, local"};
inline constexpr Knob kCycleTimeMs{
    "RUNRUN_CYCLE_TIME_MS", "1",
    "longest time (ms) the background thread waits to batch more tensors into a round when the "
    "previous round agreed nothing; never a fixed sleep"};
inline constexpr Knob kBurstGapUs{
    "RUNRUN_BURST_GAP_US", "50",
    "when ops arrive one call at a time, the background thread starts negotiating once none came "
    "for this long (us), or at once when the caller waits on a handle; capped by "
    "RUNRUN_CYCLE_TIME_MS; 0: it starts with the first op"};
inline constexpr Knob kFusionThreshold{
    "RUNRUN_FUSION_THRESHOLD", "4194304",
    "bytes of the fusion buffer; tensors are fused up to this size, larger ones go unfused; 0 "
    "disables fusion"};
inline constexpr Knob kCacheCapacity{
    "RUNRUN_CACHE_CAPACITY", "1024",
    "entries of the response cache (steady-state fast path); 0 disables the cache"};
inline constexpr Knob kTimeline{"RUNRUN_TIMELINE", "",
                                "path of a Chrome-trace JSON timeline to write; empty: none"};
inline constexpr Knob kTimelineMarkCycles{
    "RUNRUN_TIMELINE_MARK_CYCLES", "0",
    "1: the timeline marks each negotiation round with a global CYCLE_START (as Horovod's)"};
inline constexpr Knob kStallCheckTime{
    "RUNRUN_STALL_CHECK_TIME", "60",
    "seconds after which a tensor submitted by some ranks but not others is reported; 0: off"};
inline constexpr Knob kStallShutdownTime{
    "RUNRUN_STALL_SHUTDOWN_TIME", "600",
    "seconds after which such a stall fails the op on every rank (bounded by default, as torch's "
    "process-group timeout; Horovod's default is never); 0: never"};
inline constexpr Knob kShutdownTimeout{
    "RUNRUN_SHUTDOWN_TIMEOUT", "30",
    "seconds shutdown waits for the other ranks to agree before it gives up on them"};
inline constexpr Knob kCollectiveTimeout{
    "RUNRUN_COLLECTIVE_TIMEOUT", "0",
    "seconds a collective every rank agreed on may take before it fails as a lost peer; 0: no "
    "limit"};
inline constexpr Knob kPeerTimeout{
    "RUNRUN_PEER_TIMEOUT", "30",
    "seconds without a heartbeat after which a peer counts as lost (a dead process is noticed "
    "at once); 0 turns peer monitoring off"};
inline constexpr Knob kJoinAverage{
    "RUNRUN_JOIN_AVERAGE", "set_size",
    "divisor of an average while ranks have joined: set_size (joined ranks count and contribute "
    "zeros, as Horovod and torch DDP's Join) or contributors (only the ranks that contributed)"};
inline constexpr Knob kRendezvousTimeout{
    "RUNRUN_RENDEZVOUS_TIMEOUT", "30",
    "seconds a rank keeps trying to reach the job's rendezvous server (it may start later than "
    "the rank), and the bound on every request to it other than a wait"};
inline constexpr Knob kHierarchicalAllreduce{
    "RUNRUN_HIERARCHICAL_ALLREDUCE", "0",
    "1: allreduce of CPU tensors in the global set as reduce-scatter inside each host, allreduce "
    "across hosts, allgather inside each host (docs/backends.md); 0: flat"};
inline constexpr Knob kAutotune{
    "RUNRUN_AUTOTUNE", "0",
    "1: during the first steps, search the global set's fusion threshold, cycle time and (with "
    ">1 host of equal size) hierarchical allreduce from measured throughput, then freeze them "
    "(docs/profiling.md)"};
inline constexpr Knob kAutotuneLog{
    "RUNRUN_AUTOTUNE_LOG", "",
    "path of a CSV file where rank 0 logs every autotune sample and the frozen values; empty: "
    "none"};
inline constexpr Knob kAutotuneWarmupSamples{
    "RUNRUN_AUTOTUNE_WARMUP_SAMPLES", "3",
    "autotune samples discarded at the start (start-up, first-step allocations)"};
inline constexpr Knob kAutotuneStepsPerSample{
    "RUNRUN_AUTOTUNE_STEPS_PER_SAMPLE", "10",
    "negotiated rounds that agreed work per autotune sample (its score: agreed bytes / time)"};
inline constexpr Knob kAutotuneSamplesPerCandidate{
    "RUNRUN_AUTOTUNE_SAMPLES_PER_CANDIDATE", "3",
    "autotune samples per candidate setting; its score is their median"};
inline constexpr Knob kAutotuneMargin{
    "RUNRUN_AUTOTUNE_MARGIN", "0.05",
    "noise guard: a candidate replaces the incumbent (first the defaults) only when its median "
    "score is higher by more than this fraction"};
inline constexpr Knob kProfile{
    "RUNRUN_PROFILE", "",
    "anything but empty or 0 (runrun --profile): per-step profile tables (runrun.common.profile) "
    "and each rank's lateness in the global set's negotiation (docs/profiling.md)"};
inline constexpr Knob kGpuOperations{
    "RUNRUN_GPU_OPERATIONS", "auto",
    "how CUDA tensors move (docs/gpu.md): auto (NCCL when every rank of the process set finds a "
    "usable NCCL, else staging through host memory over MPI/Gloo), nccl (the same, but an error "
    "instead of staging), staging (never NCCL)"};
inline constexpr Knob kHierarchicalAllreduceCross{
    "RUNRUN_HIERARCHICAL_ALLREDUCE_CROSS", "nccl",
    "the stage across hosts of the hierarchical allreduce of CUDA tensors over NCCL (docs/gpu.md): "
    "nccl (an NCCL communicator per place in a host) or staging (through pinned host memory over "
    "the controller's transport, MPI or Gloo, as Horovod's NCCL hierarchical allreduce does)"};
inline constexpr Knob kThreadAffinity{
    "RUNRUN_THREAD_AFFINITY", "",
    "CPU ids, one per local rank, comma-separated (as Horovod's HOROVOD_THREAD_AFFINITY): each "
    "rank's background threads run only on the CPU of its local rank; empty: not pinned"};
}  // namespace knobs

inline constexpr std::array kAllKnobs = {
    knobs::kLogLevel,
    knobs::kBackend,
    knobs::kCycleTimeMs,
    knobs::kBurstGapUs,
    knobs::kFusionThreshold,
    knobs::kCacheCapacity,
    knobs::kTimeline,
    knobs::kTimelineMarkCycles,
    knobs::kStallCheckTime,
    knobs::kStallShutdownTime,
    knobs::kShutdownTimeout,
    knobs::kCollectiveTimeout,
    knobs::kPeerTimeout,
    knobs::kJoinAverage,
    knobs::kRendezvousTimeout,
    knobs::kHierarchicalAllreduce,
    knobs::kAutotune,
    knobs::kAutotuneLog,
    knobs::kAutotuneWarmupSamples,
    knobs::kAutotuneStepsPerSample,
    knobs::kAutotuneSamplesPerCandidate,
    knobs::kAutotuneMargin,
    knobs::kProfile,
    knobs::kGpuOperations,
    knobs::kHierarchicalAllreduceCross,
    knobs::kThreadAffinity,
};

}  // namespace runrun
