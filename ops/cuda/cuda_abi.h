#pragma once
// Why: runrun compiles without any CUDA header and loads the CUDA runtime at run time
// (library_search.h), so it declares here the small part of the CUDA runtime's C ABI it calls:
// opaque handle types, the constants it passes, and one function-pointer type per entry
// point. Enumerations travel as int (their ABI). tests/unit/gpu/cuda_abi_check.cc compares
// every declaration with the real cuda_runtime_api.h wherever the build finds one (CMake:
// RUNRUN_CUDA_ABI_CHECK), so a mistake here fails the build there.
// Thread-safety: declarations only.

#include <cstddef>

// The CUDA runtime's own tag names, so that a cudaStream_t from a framework converts as is.
struct CUstream_st;
struct CUevent_st;

namespace runrun::gpu::cuda_abi {

using Error = int;  // cudaError_t
using Stream = CUstream_st*;
using Event = CUevent_st*;

inline constexpr Error kSuccess = 0;
inline constexpr Error kErrorNotReady = 600;  // cudaErrorNotReady: an event still pending
inline constexpr unsigned kStreamNonBlocking = 0x1;
inline constexpr unsigned kEventDisableTiming = 0x2;
inline constexpr int kMemcpyDefault = 4;  // cudaMemcpyDefault: direction from the pointers

using RuntimeGetVersion = Error (*)(int*);
using DriverGetVersion = Error (*)(int*);
using GetDeviceCount = Error (*)(int*);
using GetDevice = Error (*)(int*);
using SetDevice = Error (*)(int);
using GetErrorString = const char* (*)(Error);
using StreamCreateWithFlags = Error (*)(Stream*, unsigned);
using StreamDestroy = Error (*)(Stream);
using StreamWaitEvent = Error (*)(Stream, Event, unsigned);
using EventCreateWithFlags = Error (*)(Event*, unsigned);
using EventDestroy = Error (*)(Event);
using EventRecord = Error (*)(Event, Stream);
using EventQuery = Error (*)(Event);
using EventSynchronize = Error (*)(Event);
using MemcpyAsync = Error (*)(void*, const void*, size_t, int, Stream);
using MemsetAsync = Error (*)(void*, int, size_t, Stream);
using Malloc = Error (*)(void**, size_t);
using Free = Error (*)(void*);
using MallocHost = Error (*)(void**, size_t);
using FreeHost = Error (*)(void*);
// Stream-ordered allocation (CUDA 11.2+): outputs runrun allocates on a GPU are freed on the
// stream that consumes them, without the device-wide synchronization of cudaFree.
using MallocAsync = Error (*)(void**, size_t, Stream);
using FreeAsync = Error (*)(void*, Stream);

}  // namespace runrun::gpu::cuda_abi
