#include "ops/shm/shm_liveness.h"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <string>
#include <sys/stat.h>

namespace runrun::shm {

uint64_t pid_namespace_id() {
  struct stat info{};
  if (stat("/proc/self/ns/pid", &info) != 0) return 0;
  return static_cast<uint64_t>(info.st_ino);
}

bool process_is_gone(pid_t pid) {
  if (pid <= 0) return false;
  if (kill(pid, 0) != 0 && errno == ESRCH) return true;
  // A killed child stays a zombie until its parent (the launcher) reaps it.
  const std::string path = "/proc/" + std::to_string(pid) + "/stat";
  FILE* file = std::fopen(path.c_str(), "r");
  if (file == nullptr) return errno == ENOENT;
  char buffer[512] = {};
  const size_t length = std::fread(buffer, 1, sizeof(buffer) - 1, file);
  std::fclose(file);
  buffer[length] = '\0';
  const char* close = std::strrchr(buffer, ')');  // the name may hold spaces and parentheses
  if (close == nullptr || close[1] != ' ') return false;
  return close[2] == 'Z' || close[2] == 'X';
}

}  // namespace runrun::shm
