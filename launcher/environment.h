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

// Variables of the launcher itself (read by it, never forwarded to the ranks).
inline constexpr const char* kRshAgentEnv = "RUNRUN_RSH_AGENT";

}  // namespace runrun::launcher
