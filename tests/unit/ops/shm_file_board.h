#pragma once
// Why: shared-memory groups of the shm tests meet through a board; ranks that are real
// processes (fork) need one that crosses processes without a server: one file per key in a
// temporary folder (written under a temporary name, then renamed, so a reader never sees half
// a value). Thread-safety: any thread or process.

#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "common/errors.h"
#include "ops/shm/shm_board.h"

namespace runrun::testing {

class FileBoard final : public shm::Board {
 public:
  explicit FileBoard(std::string folder) : folder_(std::move(folder)) {}

  void set(const std::string& key, const std::string& value) override {
    const std::string path = path_of(key);
    const std::string temporary = path + ".tmp" + std::to_string(getpid());
    {
      std::ofstream out(temporary, std::ios::binary);
      out << value;
    }
    std::rename(temporary.c_str(), path.c_str());
  }

  std::string get(const std::string& key, std::chrono::milliseconds timeout) override {
    const auto until = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      std::ifstream in(path_of(key), std::ios::binary);
      if (in) {
        std::stringstream text;
        text << in.rdbuf();
        return text.str();
      }
      if (std::chrono::steady_clock::now() > until) {
        throw TimeoutError(RUNRUN_WHERE, "test board: no key '" + key + "'");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }

 private:
  std::string path_of(std::string key) const {
    for (char& c : key) {
      if (c == '/') c = '_';
    }
    return folder_ + "/" + key;
  }
  std::string folder_;
};

}  // namespace runrun::testing
