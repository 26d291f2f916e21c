// Compile-time check of ops/cuda/cuda_abi.h and ops/nccl/nccl_abi.h against the real
// cuda_runtime_api.h and nccl.h: compiled (never run) wherever the build finds those headers
// (tests/unit/gpu/CMakeLists.txt), so a declaration that differs from CUDA's or NCCL's ABI fails
// the build there. Enumerations are declared as int on runrun's side: an enum and an integer of
// the same size are passed alike, so they count as compatible.

#include <cuda_runtime_api.h>

#include <type_traits>

#include "ops/cuda/cuda_abi.h"

#if defined(RUNRUN_CHECK_NCCL_ABI)
#include <nccl.h>

#include "ops/nccl/nccl_abi.h"
#endif

namespace {

template <typename Ours, typename Theirs>
constexpr bool compatible() {
  if constexpr (std::is_same_v<Ours, Theirs>) {
    return true;
  } else if constexpr (std::is_pointer_v<Ours> && std::is_pointer_v<Theirs>) {
    using OursTarget = std::remove_pointer_t<Ours>;
    using TheirsTarget = std::remove_pointer_t<Theirs>;
    return std::is_const_v<OursTarget> == std::is_const_v<TheirsTarget> &&
           compatible<std::remove_cv_t<OursTarget>, std::remove_cv_t<TheirsTarget>>();
  } else if constexpr (std::is_integral_v<Ours> && std::is_enum_v<Theirs>) {
    return sizeof(Ours) == sizeof(Theirs);
  } else if constexpr (std::is_class_v<Ours> && std::is_class_v<Theirs>) {
    // A struct passed by value (ncclUniqueId): same size and alignment, plain bytes.
    return sizeof(Ours) == sizeof(Theirs) && alignof(Ours) == alignof(Theirs) &&
           std::is_trivially_copyable_v<Ours> && std::is_trivially_copyable_v<Theirs>;
  } else {
    return false;
  }
}

template <typename OursResult, typename... OursArgs, typename TheirsResult, typename... TheirsArgs>
constexpr bool same_abi(OursResult (*)(OursArgs...), TheirsResult (*)(TheirsArgs...)) {
  if constexpr (sizeof...(OursArgs) != sizeof...(TheirsArgs)) {
    return false;
  } else {
    return compatible<OursResult, TheirsResult>() && (compatible<OursArgs, TheirsArgs>() && ...);
  }
}

#define RUNRUN_CHECK_ENTRY(namespace_, our_type, their_function)                            \
  static_assert(                                                                            \
      same_abi(static_cast<runrun::gpu::namespace_::our_type>(nullptr), &::their_function), \
      #their_function " differs from runrun::gpu::" #namespace_ "::" #our_type)

RUNRUN_CHECK_ENTRY(cuda_abi, RuntimeGetVersion, cudaRuntimeGetVersion);
RUNRUN_CHECK_ENTRY(cuda_abi, DriverGetVersion, cudaDriverGetVersion);
RUNRUN_CHECK_ENTRY(cuda_abi, GetDeviceCount, cudaGetDeviceCount);
RUNRUN_CHECK_ENTRY(cuda_abi, GetDevice, cudaGetDevice);
RUNRUN_CHECK_ENTRY(cuda_abi, SetDevice, cudaSetDevice);
RUNRUN_CHECK_ENTRY(cuda_abi, GetErrorString, cudaGetErrorString);
RUNRUN_CHECK_ENTRY(cuda_abi, StreamCreateWithFlags, cudaStreamCreateWithFlags);
RUNRUN_CHECK_ENTRY(cuda_abi, StreamDestroy, cudaStreamDestroy);
RUNRUN_CHECK_ENTRY(cuda_abi, StreamWaitEvent, cudaStreamWaitEvent);
RUNRUN_CHECK_ENTRY(cuda_abi, EventCreateWithFlags, cudaEventCreateWithFlags);
RUNRUN_CHECK_ENTRY(cuda_abi, EventDestroy, cudaEventDestroy);
RUNRUN_CHECK_ENTRY(cuda_abi, EventRecord, cudaEventRecord);
RUNRUN_CHECK_ENTRY(cuda_abi, EventQuery, cudaEventQuery);
RUNRUN_CHECK_ENTRY(cuda_abi, EventSynchronize, cudaEventSynchronize);
RUNRUN_CHECK_ENTRY(cuda_abi, MemcpyAsync, cudaMemcpyAsync);
RUNRUN_CHECK_ENTRY(cuda_abi, MemsetAsync, cudaMemsetAsync);
// cuda_runtime.h adds C++ template overloads of these two: the C entry point is the one taking
// void** (a declaration of ours that matches none of them fails static_cast).
static_assert(same_abi(static_cast<runrun::gpu::cuda_abi::Malloc>(nullptr),
                       static_cast<cudaError_t (*)(void**, size_t)>(&::cudaMalloc)));
static_assert(same_abi(static_cast<runrun::gpu::cuda_abi::MallocHost>(nullptr),
                       static_cast<cudaError_t (*)(void**, size_t)>(&::cudaMallocHost)));
RUNRUN_CHECK_ENTRY(cuda_abi, Free, cudaFree);
RUNRUN_CHECK_ENTRY(cuda_abi, FreeHost, cudaFreeHost);
RUNRUN_CHECK_ENTRY(cuda_abi, FreeAsync, cudaFreeAsync);
static_assert(
    same_abi(static_cast<runrun::gpu::cuda_abi::MallocAsync>(nullptr),
             static_cast<cudaError_t (*)(void**, size_t, cudaStream_t)>(&::cudaMallocAsync)));

static_assert(std::is_same_v<runrun::gpu::cuda_abi::Stream, cudaStream_t>);
static_assert(std::is_same_v<runrun::gpu::cuda_abi::Event, cudaEvent_t>);
static_assert(runrun::gpu::cuda_abi::kSuccess == cudaSuccess);
static_assert(runrun::gpu::cuda_abi::kErrorNotReady == cudaErrorNotReady);
static_assert(runrun::gpu::cuda_abi::kStreamNonBlocking == cudaStreamNonBlocking);
static_assert(runrun::gpu::cuda_abi::kEventDisableTiming == cudaEventDisableTiming);
static_assert(runrun::gpu::cuda_abi::kMemcpyDefault == cudaMemcpyDefault);

#if defined(RUNRUN_CHECK_NCCL_ABI)
RUNRUN_CHECK_ENTRY(nccl_abi, GetVersion, ncclGetVersion);
RUNRUN_CHECK_ENTRY(nccl_abi, GetErrorString, ncclGetErrorString);
RUNRUN_CHECK_ENTRY(nccl_abi, GetUniqueId, ncclGetUniqueId);
RUNRUN_CHECK_ENTRY(nccl_abi, CommInitRank, ncclCommInitRank);
RUNRUN_CHECK_ENTRY(nccl_abi, CommDestroy, ncclCommDestroy);
RUNRUN_CHECK_ENTRY(nccl_abi, CommAbort, ncclCommAbort);
RUNRUN_CHECK_ENTRY(nccl_abi, CommGetAsyncError, ncclCommGetAsyncError);
RUNRUN_CHECK_ENTRY(nccl_abi, AllReduce, ncclAllReduce);
RUNRUN_CHECK_ENTRY(nccl_abi, Broadcast, ncclBroadcast);
RUNRUN_CHECK_ENTRY(nccl_abi, AllGather, ncclAllGather);
RUNRUN_CHECK_ENTRY(nccl_abi, Reduce, ncclReduce);
RUNRUN_CHECK_ENTRY(nccl_abi, ReduceScatter, ncclReduceScatter);
RUNRUN_CHECK_ENTRY(nccl_abi, Send, ncclSend);
RUNRUN_CHECK_ENTRY(nccl_abi, Recv, ncclRecv);
RUNRUN_CHECK_ENTRY(nccl_abi, GroupStart, ncclGroupStart);
RUNRUN_CHECK_ENTRY(nccl_abi, GroupEnd, ncclGroupEnd);
RUNRUN_CHECK_ENTRY(nccl_abi, RedOpCreatePreMulSum, ncclRedOpCreatePreMulSum);
RUNRUN_CHECK_ENTRY(nccl_abi, RedOpDestroy, ncclRedOpDestroy);

namespace nccl = runrun::gpu::nccl_abi;
static_assert(std::is_same_v<nccl::Comm, ncclComm_t>);
static_assert(nccl::kSuccess == ncclSuccess && nccl::kInProgress == ncclInProgress);
static_assert(nccl::kInt8 == ncclInt8 && nccl::kUint8 == ncclUint8 && nccl::kInt32 == ncclInt32 &&
              nccl::kUint32 == ncclUint32 && nccl::kInt64 == ncclInt64 &&
              nccl::kUint64 == ncclUint64 && nccl::kFloat16 == ncclFloat16 &&
              nccl::kFloat32 == ncclFloat32 && nccl::kFloat64 == ncclFloat64 &&
              nccl::kBfloat16 == ncclBfloat16);
static_assert(nccl::kSum == ncclSum && nccl::kProd == ncclProd && nccl::kMax == ncclMax &&
              nccl::kMin == ncclMin && nccl::kAvg == ncclAvg);
static_assert(nccl::kScalarHostImmediate == ncclScalarHostImmediate);
static_assert(nccl::kUniqueIdBytes == NCCL_UNIQUE_ID_BYTES);
#endif

}  // namespace
