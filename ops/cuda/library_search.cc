#include "ops/cuda/library_search.h"

#include <dlfcn.h>
#include <link.h>

#include <cstdlib>
#include <cstring>

namespace runrun::gpu {
namespace {

std::string last_dl_error() {
  const char* message = dlerror();
  return message != nullptr ? message : "unknown dlopen error";
}

std::string file_name_of(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

int collect_loaded(struct dl_phdr_info* info, size_t /*size*/, void* data) {
  auto* found = static_cast<std::pair<std::string, std::vector<std::string>>*>(data);
  if (info->dlpi_name == nullptr || info->dlpi_name[0] == '\0') return 0;
  const std::string path = info->dlpi_name;
  if (file_name_of(path).rfind(found->first, 0) == 0) found->second.push_back(path);
  return 0;
}

// The file dlopen resolved `handle` to (a soname search does not say which file it took).
std::string path_of(void* handle, const std::string& fallback) {
  struct link_map* map = nullptr;
  if (dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map != nullptr && map->l_name != nullptr &&
      map->l_name[0] != '\0') {
    return map->l_name;
  }
  return fallback;
}

}  // namespace

std::vector<std::string> loaded_libraries_with_prefix(const std::string& prefix) {
  std::pair<std::string, std::vector<std::string>> found{prefix, {}};
  dl_iterate_phdr(collect_loaded, &found);
  return found.second;
}

LibrarySearchResult search_library(const LibrarySpec& spec) {
  LibrarySearchResult result;
  const char* explicit_path = spec.env_var.empty() ? nullptr : std::getenv(spec.env_var.c_str());
  if (explicit_path != nullptr && explicit_path[0] != '\0') {
    void* handle = dlopen(explicit_path, RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      result.attempts.push_back(spec.env_var + "=" + explicit_path + ": " + last_dl_error());
      return result;
    }
    result.handle = handle;
    result.path = path_of(handle, explicit_path);
    result.found_by = "set by " + spec.env_var;
    return result;
  }
  if (!spec.env_var.empty()) result.attempts.push_back(spec.env_var + ": not set");

  const auto loaded = loaded_libraries_with_prefix(spec.loaded_prefix);
  for (const auto& path : loaded) {
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
    if (handle == nullptr) {
      result.attempts.push_back("already loaded " + path + ": " + last_dl_error());
      continue;
    }
    result.handle = handle;
    result.path = path;
    result.found_by = "already loaded into this process";
    return result;
  }
  if (loaded.empty()) {
    result.attempts.push_back("already loaded into this process (" + spec.loaded_prefix +
                              "*): none");
  }

  for (const auto& soname : spec.sonames) {
    void* handle = dlopen(soname.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      result.attempts.push_back("the dynamic linker, " + soname + ": " + last_dl_error());
      continue;
    }
    result.handle = handle;
    result.path = path_of(handle, soname);
    result.found_by = "found by the dynamic linker";
    return result;
  }
  return result;
}

std::string describe_search_failure(const LibrarySpec& spec, const LibrarySearchResult& result) {
  std::string out = spec.what + " was not found; looked at:";
  for (const auto& attempt : result.attempts) out += "\n  - " + attempt;
  if (!spec.install_hint.empty()) out += "\n" + spec.install_hint;
  return out;
}

}  // namespace runrun::gpu
