#pragma once
// Why: as ops/cuda/cuda_abi.h for NCCL: the part of NCCL's C ABI runrun calls, declared here
// because no NCCL header is needed to build runrun (NCCL is loaded at run time,
// ops/nccl/nccl_library.h). Enumerations travel as int. tests/unit/gpu/cuda_abi_check.cc
// compares every declaration with the real nccl.h wherever the build finds one.
// Thread-safety: declarations only.

#include <cstddef>

#include "ops/cuda/cuda_abi.h"

struct ncclComm;  // NCCL's own tag name, so a communicator from elsewhere converts as is

namespace runrun::gpu::nccl_abi {

using Result = int;  // ncclResult_t
using Comm = ncclComm*;
using DataType = int;  // ncclDataType_t
using RedOp = int;     // ncclRedOp_t
using ScalarResidence = int;

inline constexpr Result kSuccess = 0;
inline constexpr Result kInProgress = 7;

// ncclDataType_t
inline constexpr DataType kInt8 = 0;
inline constexpr DataType kUint8 = 1;
inline constexpr DataType kInt32 = 2;
inline constexpr DataType kUint32 = 3;
inline constexpr DataType kInt64 = 4;
inline constexpr DataType kUint64 = 5;
inline constexpr DataType kFloat16 = 6;
inline constexpr DataType kFloat32 = 7;
inline constexpr DataType kFloat64 = 8;
inline constexpr DataType kBfloat16 = 9;  // NCCL 2.10 and later

// ncclRedOp_t
inline constexpr RedOp kSum = 0;
inline constexpr RedOp kProd = 1;
inline constexpr RedOp kMax = 2;
inline constexpr RedOp kMin = 3;
inline constexpr RedOp kAvg = 4;  // NCCL 2.10 and later

inline constexpr ScalarResidence kScalarHostImmediate = 1;

inline constexpr size_t kUniqueIdBytes = 128;
struct UniqueId {
  char internal[kUniqueIdBytes];
};

using GetVersion = Result (*)(int*);
using GetErrorString = const char* (*)(Result);
using GetUniqueId = Result (*)(UniqueId*);
using CommInitRank = Result (*)(Comm*, int, UniqueId, int);
using CommDestroy = Result (*)(Comm);
using CommAbort = Result (*)(Comm);
using CommGetAsyncError = Result (*)(Comm, Result*);
using AllReduce = Result (*)(const void*, void*, size_t, DataType, RedOp, Comm, cuda_abi::Stream);
using Broadcast = Result (*)(const void*, void*, size_t, DataType, int, Comm, cuda_abi::Stream);
using AllGather = Result (*)(const void*, void*, size_t, DataType, Comm, cuda_abi::Stream);
using Reduce = Result (*)(const void*, void*, size_t, DataType, RedOp, int, Comm, cuda_abi::Stream);
using ReduceScatter = Result (*)(const void*, void*, size_t, DataType, RedOp, Comm,
                                 cuda_abi::Stream);
using Send = Result (*)(const void*, size_t, DataType, int, Comm, cuda_abi::Stream);
using Recv = Result (*)(void*, size_t, DataType, int, Comm, cuda_abi::Stream);
using GroupStart = Result (*)();
using GroupEnd = Result (*)();
using RedOpCreatePreMulSum = Result (*)(RedOp*, void*, DataType, ScalarResidence, Comm);
using RedOpDestroy = Result (*)(RedOp, Comm);

}  // namespace runrun::gpu::nccl_abi
