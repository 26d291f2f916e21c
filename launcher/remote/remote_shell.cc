#include "launcher/remote/remote_shell.h"

#include "launcher/remote/shell_words.h"

namespace runrun::launcher {

std::vector<std::string> remote_shell_command(const LaunchOptions& options, const std::string& host,
                                              const std::string& command, int connect_timeout_s) {
  std::vector<std::string> argv;
  if (options.rsh_agent.empty()) {
    argv = {"ssh", "-o", "BatchMode=yes"};
    if (connect_timeout_s > 0) {
      argv.insert(argv.end(), {"-o", "ConnectTimeout=" + std::to_string(connect_timeout_s)});
    }
    if (options.ssh_port) argv.insert(argv.end(), {"-p", std::to_string(*options.ssh_port)});
    if (!options.ssh_identity_file.empty()) {
      argv.insert(argv.end(), {"-i", options.ssh_identity_file});
    }
  } else {
    argv = split_shell_words(options.rsh_agent, "--rsh-agent");
  }
  argv.insert(argv.end(), {host, command});
  return argv;
}

}  // namespace runrun::launcher
