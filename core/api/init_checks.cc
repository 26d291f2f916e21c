#include "core/api/init_checks.h"

#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "common/errors.h"
#include "core/runtime/thread_placement.h"

extern char** environ;

namespace runrun {
namespace {

int int_or(const std::map<std::string, std::string>& env, const char* name, int fallback) {
  const auto it = env.find(name);
  if (it == env.end()) return fallback;
  int value = 0;
  const std::string& text = it->second;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  return error == std::errc() && end == text.data() + text.size() && value >= 0 ? value : -1;
}

// The place one launcher's variables give, or nullopt-like (rank -1) when it set none.
EarlyPlace place_from(const std::map<std::string, std::string>& env, const char* rank,
                      const char* local_rank, const char* local_size) {
  if (env.find(rank) == env.end()) return {};
  return EarlyPlace{int_or(env, rank, -1), int_or(env, local_rank, -1),
                    int_or(env, local_size, -1)};
}

// Whether `path` can be opened for writing as the timeline will be; a file this check created
// is removed again, so a job that fails later leaves none behind.
void check_timeline_writable(const std::string& path) {
  const bool existed = access(path.c_str(), F_OK) == 0;
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    const int error = errno;
    throw InvalidArgumentError(
        RUNRUN_WHERE,
        "RUNRUN_TIMELINE on rank 0 (the rank that writes it): cannot open the "
        "timeline file '" +
            path + "' for writing on this rank's host: " + std::strerror(error) +
            "; give a path in an existing, writable "
            "directory of rank 0's host, or unset RUNRUN_TIMELINE");
  }
  close(fd);
  if (!existed) unlink(path.c_str());
}

}  // namespace

EarlyPlace early_place(const std::map<std::string, std::string>& env, bool alone) {
  for (const auto& names :
       {std::array<const char*, 3>{"RUNRUN_RANK", "RUNRUN_LOCAL_RANK", "RUNRUN_LOCAL_SIZE"},
        std::array<const char*, 3>{"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_LOCAL_RANK",
                                   "OMPI_COMM_WORLD_LOCAL_SIZE"}}) {
    const EarlyPlace place = place_from(env, names[0], names[1], names[2]);
    if (place.rank >= 0) return place;
  }
  if (alone) return EarlyPlace{0, 0, 1};
  return {};
}

EarlyPlace early_place_of_this_process(bool alone) {
  std::map<std::string, std::string> env;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    const std::string_view text(*entry);
    const auto equals = text.find('=');
    if (equals == std::string_view::npos) continue;
    const std::string name(text.substr(0, equals));
    if (name.rfind("RUNRUN_", 0) == 0 || name.rfind("OMPI_COMM_WORLD_", 0) == 0) {
      env.emplace(name, std::string(text.substr(equals + 1)));
    }
  }
  return early_place(env, alone);
}

void check_before_transport(const Config& config, const EarlyPlace& place) {
  if (!config.timeline_path.empty() && place.rank == 0) {
    check_timeline_writable(config.timeline_path);
  }
  if (!config.thread_affinity.empty() && place.rank >= 0 && place.local_rank >= 0 &&
      place.local_size > place.local_rank) {
    Topology topology;
    topology.rank = place.rank;
    topology.local_rank = place.local_rank;
    topology.local_size = place.local_size;
    background_cpu(config.thread_affinity, topology);  // throws what it refuses
  }
}

}  // namespace runrun
