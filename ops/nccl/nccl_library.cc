#include "ops/nccl/nccl_library.h"

#include <memory>

#include "common/env_names.h"
#include "common/errors.h"
#include "ops/cuda/symbol_table.h"

namespace runrun::gpu {

NcclProbe open_nccl(const LibrarySpec& spec) {
  NcclProbe probe;
  const LibrarySearchResult found = search_library(spec);
  if (!found.found()) {
    probe.problem = describe_search_failure(spec, found);
    return probe;
  }
  auto library = std::make_unique<NcclLibrary>();
  library->path = found.path;
  library->found_by = found.found_by;
  SymbolTable symbols(found.handle);
  symbols.resolve(library->get_version, "ncclGetVersion");
  symbols.resolve(library->get_error_string, "ncclGetErrorString");
  symbols.resolve(library->get_unique_id, "ncclGetUniqueId");
  symbols.resolve(library->comm_init_rank, "ncclCommInitRank");
  symbols.resolve(library->comm_destroy, "ncclCommDestroy");
  symbols.resolve(library->comm_abort, "ncclCommAbort");
  symbols.resolve(library->comm_get_async_error, "ncclCommGetAsyncError");
  symbols.resolve(library->all_reduce, "ncclAllReduce");
  symbols.resolve(library->broadcast, "ncclBroadcast");
  symbols.resolve(library->all_gather, "ncclAllGather");
  symbols.resolve(library->reduce, "ncclReduce");
  symbols.resolve(library->reduce_scatter, "ncclReduceScatter");
  symbols.resolve(library->send, "ncclSend");
  symbols.resolve(library->recv, "ncclRecv");
  symbols.resolve(library->group_start, "ncclGroupStart");
  symbols.resolve(library->group_end, "ncclGroupEnd");
  symbols.resolve(library->red_op_create_pre_mul_sum, "ncclRedOpCreatePreMulSum");
  symbols.resolve(library->red_op_destroy, "ncclRedOpDestroy");
  const std::string where = "NCCL at " + found.path + " (" + found.found_by + ")";
  if (library->get_version == nullptr ||
      library->get_version(&library->version) != nccl_abi::kSuccess) {
    probe.problem = where + " does not report its version (ncclGetVersion); point " +
                    std::string(env::kNcclLibrary) + " at a libnccl.so.2 of NCCL 2.11 or later";
    return probe;
  }
  if (library->version < kMinimumNcclVersion || !symbols.missing().empty()) {
    probe.problem = where + " is NCCL " + nccl_version_string(library->version) +
                    (symbols.missing().empty() ? "" : ", which lacks " + symbols.missing_list()) +
                    "; runrun needs NCCL 2.11 or later: install a newer nvidia-nccl wheel or "
                    "libnccl2, or point " +
                    std::string(env::kNcclLibrary) + " at one";
    return probe;
  }
  probe.library = library.release();  // kept for the process, as the library itself
  return probe;
}

const LibrarySpec& nccl_spec() {
  static const LibrarySpec spec{
      "NCCL (libnccl)",
      env::kNcclLibrary,
      "libnccl.so",
      {"libnccl.so.2", "libnccl.so"},
      "Install a CUDA build of your framework (torch brings the nvidia-nccl wheel, found once "
      "torch is imported), `pip install nvidia-nccl-cu13`, or libnccl2 from NVIDIA's packages, "
      "and put it on LD_LIBRARY_PATH or set RUNRUN_NCCL_LIBRARY to its path."};
  return spec;
}

const NcclProbe& probe_nccl() {
  static const NcclProbe probe = open_nccl(nccl_spec());
  return probe;
}

const NcclLibrary& nccl_library() {
  const NcclProbe& probe = probe_nccl();
  if (probe.library == nullptr) throw UnsupportedError(RUNRUN_WHERE, probe.problem);
  return *probe.library;
}

std::string NcclLibrary::error_text(nccl_abi::Result result) const {
  const char* text = get_error_string != nullptr ? get_error_string(result) : nullptr;
  return "NCCL error " + std::to_string(result) + (text != nullptr ? std::string(": ") + text : "");
}

std::string nccl_version_string(int version) {
  if (version <= 0) return "of unknown version";
  const bool old_encoding = version < 10000;
  const int major = old_encoding ? version / 1000 : version / 10000;
  const int minor = old_encoding ? (version % 1000) / 100 : (version % 10000) / 100;
  const int patch = version % 100;
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

}  // namespace runrun::gpu
