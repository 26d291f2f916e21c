#include "launcher/preflight.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <set>

#include "common/errors.h"
#include "launcher/remote/remote_shell.h"
#include "launcher/remote/shell_words.h"
#include "launcher/processes/subprocess.h"

namespace runrun::launcher {
namespace {

[[noreturn]] void fail(const std::string& message) {
  throw InvalidArgumentError(RUNRUN_WHERE, message);
}

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

bool is_cidr(const std::string& item) {
  const auto slash = item.find('/');
  const std::string address = item.substr(0, slash);
  const std::string bits = item.substr(slash + 1);
  unsigned char buffer[16];
  int max_bits = 0;
  if (inet_pton(AF_INET, address.c_str(), buffer) == 1) max_bits = 32;
  if (inet_pton(AF_INET6, address.c_str(), buffer) == 1) max_bits = 128;
  int value = -1;
  const auto [ptr, ec] = std::from_chars(bits.data(), bits.data() + bits.size(), value);
  return max_bits > 0 && ec == std::errc() && ptr == bits.data() + bits.size() && value >= 0 &&
         value <= max_bits;
}

// The last non-empty lines of a remote shell's output, on one line.
std::string last_lines(const std::string& output) {
  std::string text = output;
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  if (text.size() > 400) text = "..." + text.substr(text.size() - 400);
  std::replace(text.begin(), text.end(), '\n', ' ');
  return text.empty() ? "(no output)" : text;
}

}  // namespace

void check_process_count(const LaunchOptions& options) {
  if (options.num_proc == 0) {  // -np left out reads as 0 too
    fail(
        "no -np given (or -np 0): give the number of processes, at least 1, e.g. runrun -np 4 "
        "python train.py");
  }
  if (options.num_proc < 1) {
    fail("-np must be at least 1 (got " + std::to_string(options.num_proc) +
         "): give the number of processes, e.g. runrun -np 4 python train.py");
  }
  const int slots = total_slots(options.hosts);
  if (options.num_proc > slots) {
    fail("-np " + std::to_string(options.num_proc) + " is more than the " + std::to_string(slots) +
         " slots given by " + options.hosts_source + ": lower -np or give more slots (host:slots)");
  }
}

void check_command(const LaunchOptions& options) {
  if (options.command.empty()) {
    fail(
        "no command given: put the program to run after the options, e.g. "
        "runrun -np 2 python train.py");
  }
}

void check_program_found(const std::string& program, const std::string& path_env) {
  const auto runnable = [](const std::string& path) {
    struct stat info{};
    return stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode) &&
           access(path.c_str(), X_OK) == 0;
  };
  if (program.find('/') == std::string::npos) {
    std::size_t start = 0;
    while (start <= path_env.size()) {
      auto colon = path_env.find(':', start);
      if (colon == std::string::npos) colon = path_env.size();
      const std::string dir = path_env.substr(start, colon - start);
      if (runnable((dir.empty() ? "." : dir) + "/" + program)) return;
      start = colon + 1;
    }
    fail("command '" + program + "' was not found on PATH (" + path_env +
         "): check the spelling, activate the environment that provides it before running "
         "runrun (the ranks get this PATH), or give its path (./" +
         program + ")");
  }
  struct stat info{};
  if (stat(program.c_str(), &info) != 0) {
    fail("command '" + program + "' does not exist: " + std::strerror(errno) +
         " (relative paths start from the working directory, which the ranks share)");
  }
  if (S_ISDIR(info.st_mode)) fail("command '" + program + "' is a directory, not a program");
  if (!runnable(program)) {
    fail("command '" + program + "' is not an executable file: make it executable (chmod +x " +
         program + ") or run it with its interpreter (e.g. runrun -np 2 python3 " + program + ")");
  }
}

void check_duplicate_hosts(const std::vector<HostSlots>& hosts, const LocalHostNames& local) {
  std::set<std::string> seen;
  std::string first_local;
  for (const auto& host : hosts) {
    if (local.is_local(host.name)) {
      if (!first_local.empty()) {
        fail("hosts '" + first_local + "' and '" + host.name +
             "' are both this machine: list it once with all its slots (e.g. localhost:4)");
      }
      first_local = host.name;
      continue;
    }
    if (!seen.insert(lower(host.name)).second) {
      fail("host '" + host.name + "' is listed twice: list each host once with all its slots");
    }
  }
}

std::vector<std::string> local_interface_names() {
  std::vector<std::string> names;
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return names;
  for (const ifaddrs* it = list; it != nullptr; it = it->ifa_next) {
    if (std::find(names.begin(), names.end(), it->ifa_name) == names.end()) {
      names.emplace_back(it->ifa_name);
    }
  }
  freeifaddrs(list);
  return names;
}

void check_network_interfaces(const std::string& spec, const std::vector<std::string>& interfaces) {
  if (spec.empty()) return;
  std::size_t start = 0;
  while (start <= spec.size()) {
    auto comma = spec.find(',', start);
    if (comma == std::string::npos) comma = spec.size();
    const std::string item = spec.substr(start, comma - start);
    start = comma + 1;
    if (item.find('/') != std::string::npos) {
      if (!is_cidr(item)) {
        fail("--network-interface '" + item + "' is not a CIDR block like 10.0.0.0/24");
      }
      continue;
    }
    if (std::find(interfaces.begin(), interfaces.end(), item) == interfaces.end()) {
      std::string known;
      for (const auto& name : interfaces) known += (known.empty() ? "" : ", ") + name;
      fail("--network-interface '" + item + "' is not an interface of this machine (it has: " +
           known + "); give an interface name or a CIDR block like 10.0.0.0/24");
    }
  }
}

std::string find_open_mpi_mpirun(const Environment& env) {
  const auto path_it = env.find("PATH");
  const std::string path = path_it == env.end() ? "" : path_it->second;
  const std::string mpirun = find_executable("mpirun", path);
  if (mpirun.empty()) {
    fail("mpirun was not found on PATH (" + path +
         "): install Open MPI (Debian/Ubuntu: apt-get install openmpi-bin; RHEL/Fedora: "
         "openmpi) or put its bin directory on PATH");
  }
  const auto runs = run_all_captured({{mpirun, "--version"}}, 20);
  const CapturedRun& run = runs.front();
  if (!run.started || run.exit_code != 0 ||
      (run.output.find("Open MPI") == std::string::npos &&
       run.output.find("OpenRTE") == std::string::npos)) {
    fail(mpirun + " is not Open MPI's mpirun (its --version said: " + last_lines(run.output) +
         run.error + "): install openmpi-bin and put it first on PATH");
  }
  return mpirun;
}

std::vector<std::string> remote_check_command(const std::string& host, const LaunchOptions& options,
                                              int connect_timeout_s) {
  return remote_shell_command(options, host, "true", connect_timeout_s);
}

void check_remote_hosts(const std::vector<std::string>& hosts, const LaunchOptions& options,
                        int connect_timeout_s) {
  if (hosts.empty()) return;
  std::vector<std::vector<std::string>> commands;
  for (const auto& host : hosts) {
    commands.push_back(remote_check_command(host, options, connect_timeout_s));
  }
  const auto runs = run_all_captured(commands, connect_timeout_s + 5);
  const std::string how = options.rsh_agent.empty() ? "ssh" : "'" + options.rsh_agent + "'";
  std::string problems;
  std::size_t first_failed = 0;
  for (std::size_t i = runs.size(); i-- > 0;) {
    const CapturedRun& run = runs[i];
    if (!(run.started && !run.timed_out && run.exit_code == 0)) first_failed = i;
  }
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const CapturedRun& run = runs[i];
    if (run.started && !run.timed_out && run.exit_code == 0) continue;
    problems += "\n  host '" + hosts[i] + "': ";
    if (!run.started) {
      problems += "cannot run " + commands[i].front() + ": " + run.error;
    } else if (run.timed_out) {
      problems += "no answer within " + std::to_string(connect_timeout_s + 5) + " s";
    } else {
      problems += last_lines(run.output);
    }
  }
  if (!problems.empty()) {
    fail("cannot reach these hosts with " + how + " without a password:" + problems + "\nCheck `" +
         shell_join(commands[first_failed]) +
         "` by hand; set up passwordless ssh as docs/launcher.md (Multi-node setup) says");
  }
}

}  // namespace runrun::launcher
