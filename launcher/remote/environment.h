#pragma once
// Why: the launcher decides what to forward from its environment; taking the environment as a
// value (instead of reading `environ` everywhere) keeps those decisions testable.
// Thread-safety: `current_environment` reads `environ`; call it before starting threads.

#include <map>
#include <string>

namespace runrun::launcher {

using Environment = std::map<std::string, std::string>;

// A copy of this process's environment.
Environment current_environment();

// The seconds of a timeout `flag` that was not given: `env`'s `runrun_name`, else
// `horovod_name` (horovodrun reads its variable when the flag is absent), else `default_s`.
// Throws InvalidArgumentError naming the variable unless its value is a whole number >= 1.
int timeout_from_environment(const Environment& env, const char* runrun_name,
                             const char* horovod_name, int default_s, const char* flag);

// Variables of the launcher itself (read by it, never forwarded to the ranks).
inline constexpr const char* kRshAgentEnv = "RUNRUN_RSH_AGENT";
// --start-timeout when the flag is not given (before Horovod's HOROVOD_START_TIMEOUT). The
// elastic timeout's is RUNRUN_ELASTIC_TIMEOUT (common/env_names.h), the name the workers read.
inline constexpr const char* kStartTimeoutEnv = "RUNRUN_START_TIMEOUT";

// The PATH every rank's command must run with (the launcher's, or the user's -x PATH=value),
// passed to the rank shim, which makes it the command's PATH again: Open MPI may put its own
// prefix first on the ranks' PATH (an explicit --prefix, or an mpirun started by absolute
// path), and then `python3` would not be the user's interpreter. The shim removes it before
// running the command.
inline constexpr const char* kRankPathEnv = "RUNRUN_RANK_PATH";

}  // namespace runrun::launcher
