#pragma once
// Why: every command the launcher runs on another host goes through the same remote shell:
// ssh (non-interactive, -p and -i honoured) or the user's --rsh-agent, called as ssh is
// (`PROGRAM HOST COMMAND`). Preflight's reachability check and the ranks of `runrun --gloo`
// build their commands here, so both reach a host the same way.
// Thread-safety: pure functions.

#include <string>
#include <vector>

#include "launcher/options/launch_options.h"

namespace runrun::launcher {

// `ssh -o BatchMode=yes [-o ConnectTimeout=T] [-p P] [-i F] HOST COMMAND` (T only when
// connect_timeout_s > 0), or `AGENT... HOST COMMAND` with --rsh-agent (split like a shell line).
// `command` is one shell command line: the remote shell interprets it, as ssh's does.
std::vector<std::string> remote_shell_command(const LaunchOptions& options, const std::string& host,
                                              const std::string& command,
                                              int connect_timeout_s = 0);

}  // namespace runrun::launcher
