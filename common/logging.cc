#include "common/logging.h"

#include <spdlog/sinks/stdout_sinks.h>
#include <unistd.h>

#include "common/errors.h"

namespace runrun {

spdlog::level::level_enum parse_log_level(const std::string& level_name,
                                          const std::string& variable) {
  if (level_name.empty()) return spdlog::level::warn;
  static const char* const kNames[] = {"trace", "debug",    "info", "warn",
                                       "error", "critical", "off"};
  for (int i = 0; i < 7; ++i) {
    if (level_name == kNames[i]) return static_cast<spdlog::level::level_enum>(i);
  }
  if (level_name == "warning") return spdlog::level::warn;
  throw InvalidArgumentError(RUNRUN_WHERE, variable + "='" + level_name +
                                               "' is not a log level: use trace, debug, info, "
                                               "warn, error, critical or off");
}

Logger make_rank_logger(int rank, int size, const std::string& level_name) {
  auto sink = std::make_shared<spdlog::sinks::stderr_sink_mt>();
  auto logger = std::make_shared<spdlog::logger>("runrun", std::move(sink));
  char host[256] = {0};
  gethostname(host, sizeof(host) - 1);
  std::string pattern = std::string("[%H:%M:%S.%e] [runrun ") + host + ":%P:%t] [rank " +
                        std::to_string(rank) + "/" + std::to_string(size) + "] [%l] %v";
  logger->set_pattern(pattern);
  logger->set_level(parse_log_level(level_name));
  logger->flush_on(spdlog::level::warn);
  return logger;
}

}  // namespace runrun
