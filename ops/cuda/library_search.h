#pragma once
// Why: GPU support is loaded at run time, never linked (docs/gpu.md): one build of runrun serves
// CPU-only machines and any CUDA machine, and uses the CUDA runtime and NCCL that the user's
// framework already brought (torch's nvidia-* wheels) instead of a second copy. This finds and
// opens one such library in a fixed, documented order and remembers every place it looked, so
// that a failure says what was looked for where and what to do.
// Thread-safety: search_library may be called from any thread (dlopen and dl_iterate_phdr are
// thread-safe); the callers (cuda_runtime_library, nccl_library) search once per process.

#include <string>
#include <vector>

namespace runrun::gpu {

struct LibrarySpec {
  std::string what;           // for messages: "the CUDA runtime", "NCCL"
  std::string env_var;        // a path that overrides the search (RUNRUN_NCCL_LIBRARY)
  std::string loaded_prefix;  // file names of an already loaded copy start with it ("libnccl.so")
  std::vector<std::string> sonames;  // tried with the dynamic linker's own search, in order
  std::string install_hint;          // what to do when nothing is found
};

struct LibrarySearchResult {
  void* handle = nullptr;  // from dlopen; never closed (the library stays for the process)
  std::string path;        // the file that was opened, as far as it is known
  std::string found_by;    // "set by RUNRUN_NCCL_LIBRARY", "already loaded into this process",
                           // "found by the dynamic linker"
  std::vector<std::string> attempts;  // one line per place looked at and what happened there
  bool found() const { return handle != nullptr; }
};

// Looks, in this order: the path in spec.env_var when it is set (and nowhere else: an explicit
// choice that fails is an error, not a fallback); a library already loaded into this process
// whose file name starts with spec.loaded_prefix (the framework's); each soname through the
// dynamic linker (LD_LIBRARY_PATH, the run path, ld.so.cache, the system directories).
LibrarySearchResult search_library(const LibrarySpec& spec);

// "NCCL was not found: <attempts, one per line>. <install hint>", for errors and --check-build.
std::string describe_search_failure(const LibrarySpec& spec, const LibrarySearchResult& result);

// Paths of the libraries loaded into this process whose file name starts with `prefix`.
std::vector<std::string> loaded_libraries_with_prefix(const std::string& prefix);

}  // namespace runrun::gpu
