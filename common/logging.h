#pragma once
// Why: every log line of a runtime carries host, pid, thread and "rank r/n", so interleaved
// output of many ranks (or many runtimes in one test process) stays readable. Loggers are
// per-runtime objects, never a process global, so N ranks as threads each log their own rank.
// Thread-safety: spdlog loggers created here are thread-safe (mutex sinks).

#include <spdlog/spdlog.h>

#include <memory>
#include <string>

namespace runrun {

using Logger = std::shared_ptr<spdlog::logger>;

// A logger whose lines read "[time] [runrun host:pid:tid] [rank r/n] [level] message".
// `level_name` is one of trace, debug, info, warn, error, critical, off; empty means warn.
// Throws InvalidArgumentError for an unknown level name.
Logger make_rank_logger(int rank, int size, const std::string& level_name);

// Parses a level name as above; an error names `variable`, where the name came from.
spdlog::level::level_enum parse_log_level(const std::string& level_name,
                                          const std::string& variable = "RUNRUN_LOG_LEVEL");

}  // namespace runrun
