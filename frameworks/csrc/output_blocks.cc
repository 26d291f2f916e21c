#include "csrc/output_blocks.h"

#include <cstdlib>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace runrun::python {
namespace {

constexpr std::size_t kMaxBlock = 64 * 1024;        // larger blocks: malloc's cost is noise
constexpr std::size_t kMaxBytes = 8 * 1024 * 1024;  // kept in all, across sizes

class BlockCache {
 public:
  void* take(std::size_t size) {
    if (size <= kMaxBlock) {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = free_.find(size);
      if (it != free_.end() && !it->second.empty()) {
        void* block = it->second.back();
        it->second.pop_back();
        bytes_ -= size;
        return block;
      }
    }
    return std::malloc(size);
  }

  void give(void* block, std::size_t size) {
    if (size <= kMaxBlock) {
      std::lock_guard<std::mutex> lock(mu_);
      if (bytes_ + size <= kMaxBytes) {
        try {
          free_[size].push_back(block);
          bytes_ += size;
          return;
        } catch (...) {  // no memory for the list itself: free the block instead
        }
      }
    }
    std::free(block);
  }

 private:
  std::mutex mu_;
  std::unordered_map<std::size_t, std::vector<void*>> free_;  // by exact size
  std::size_t bytes_ = 0;
};

BlockCache& cache() {
  static BlockCache* const instance = new BlockCache;  // never destroyed (see the header)
  return *instance;
}

}  // namespace

void* take_output_block(std::size_t size) { return cache().take(size); }

void give_output_block(void* block, std::size_t size) { cache().give(block, size); }

}  // namespace runrun::python
