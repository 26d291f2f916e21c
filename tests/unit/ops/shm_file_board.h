#pragma once
// Why: shared-memory groups of the shm tests meet through a board; ranks that are real
// processes (fork) need one that crosses processes without a server: one file per key in a
// temporary folder (written under a temporary name, then renamed, so a reader never sees half
// a value). Thread-safety: any thread or process.

#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>

#include "common/errors.h"
#include "ops/shm/shm_board.h"

namespace runrun::testing {

// A new folder under /tmp for one test's board, removed with its files when the object goes,
// and only by the process that made it (forked ranks share it and leave with _exit).
class TemporaryFolder {
 public:
  explicit TemporaryFolder(const std::string& prefix) : path_("/tmp/" + prefix + "-XXXXXX") {
    if (mkdtemp(path_.data()) == nullptr) {
      throw std::runtime_error("mkdtemp " + path_ + " failed");
    }
  }
  ~TemporaryFolder() {
    std::error_code ignored;
    if (getpid() == owner_) std::filesystem::remove_all(path_, ignored);
  }
  TemporaryFolder(const TemporaryFolder&) = delete;
  TemporaryFolder& operator=(const TemporaryFolder&) = delete;

  const std::string& path() const { return path_; }

 private:
  std::string path_;
  pid_t owner_ = getpid();
};

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
