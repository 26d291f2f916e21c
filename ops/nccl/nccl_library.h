#pragma once
// Why: the NCCL entry points the NCCL data backend calls, from the libnccl found at run time
// (library_search.h: RUNRUN_NCCL_LIBRARY, the copy the framework loaded — torch's
// nvidia-nccl wheel —, the dynamic linker), checked once for the version runrun needs
// (2.11: ncclAvg and ncclRedOpCreatePreMulSum, which do averaging and pre/postscale without
// kernels of runrun's own). Nothing of NCCL is linked into runrun.
// Thread-safety: nccl_library() searches and opens once per process (thread-safe static); the
// table is immutable; NCCL's thread-safety rules apply to its functions.

#include <string>

#include "ops/cuda/library_search.h"
#include "ops/nccl/nccl_abi.h"

namespace runrun::gpu {

// NCCL 2.11.0, encoded as ncclGetVersion reports it (10000 * major + 100 * minor + patch).
inline constexpr int kMinimumNcclVersion = 21100;

struct NcclLibrary {
  std::string path;
  std::string found_by;
  int version = 0;  // from ncclGetVersion

  nccl_abi::GetVersion get_version = nullptr;
  nccl_abi::GetErrorString get_error_string = nullptr;
  nccl_abi::GetUniqueId get_unique_id = nullptr;
  nccl_abi::CommInitRank comm_init_rank = nullptr;
  nccl_abi::CommDestroy comm_destroy = nullptr;
  nccl_abi::CommAbort comm_abort = nullptr;
  nccl_abi::CommGetAsyncError comm_get_async_error = nullptr;
  nccl_abi::AllReduce all_reduce = nullptr;
  nccl_abi::Broadcast broadcast = nullptr;
  nccl_abi::AllGather all_gather = nullptr;
  nccl_abi::Reduce reduce = nullptr;
  nccl_abi::ReduceScatter reduce_scatter = nullptr;
  nccl_abi::Send send = nullptr;
  nccl_abi::Recv recv = nullptr;
  nccl_abi::GroupStart group_start = nullptr;
  nccl_abi::GroupEnd group_end = nullptr;
  nccl_abi::RedOpCreatePreMulSum red_op_create_pre_mul_sum = nullptr;
  nccl_abi::RedOpDestroy red_op_destroy = nullptr;

  std::string error_text(nccl_abi::Result result) const;
};

struct NcclProbe {
  const NcclLibrary* library = nullptr;
  std::string problem;  // what was looked for where, or why the library found is unusable
};

const LibrarySpec& nccl_spec();
// This process's search, done once (later calls return the first outcome).
const NcclProbe& probe_nccl();
// A search of its own by `spec` (tests; the table of a success lives for the process).
NcclProbe open_nccl(const LibrarySpec& spec);

// The loaded NCCL; throws UnsupportedError with probe_nccl().problem otherwise.
const NcclLibrary& nccl_library();

// "2.32.3" from 23203 (and from the pre-2.9 encoding 1000 * major + 100 * minor + patch).
std::string nccl_version_string(int version);

}  // namespace runrun::gpu
