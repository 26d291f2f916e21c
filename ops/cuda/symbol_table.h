#pragma once
// Why: a library opened at run time is only usable when every entry point runrun calls is
// there; resolving them through one helper collects every missing name at once, so the error
// says "libnccl.so.2 at PATH lacks ncclRedOpCreatePreMulSum (NCCL 2.11 or later is needed)"
// instead of failing later at a call.
// Thread-safety: use on one thread while a table is filled; the filled table is read-only.

#include <dlfcn.h>

#include <string>
#include <vector>

namespace runrun::gpu {

class SymbolTable {
 public:
  explicit SymbolTable(void* handle) : handle_(handle) {}

  // The entry point `name` as the function-pointer type of `slot`; missing names are recorded.
  template <typename FunctionPointer>
  void resolve(FunctionPointer& slot, const char* name) {
    slot = reinterpret_cast<FunctionPointer>(dlsym(handle_, name));
    if (slot == nullptr) missing_.emplace_back(name);
  }

  const std::vector<std::string>& missing() const { return missing_; }
  std::string missing_list() const {
    std::string out;
    for (const auto& name : missing_) out += (out.empty() ? "" : ", ") + name;
    return out;
  }

 private:
  void* handle_;
  std::vector<std::string> missing_;
};

}  // namespace runrun::gpu
