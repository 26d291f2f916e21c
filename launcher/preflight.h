#pragma once
// Why: a job that cannot work should fail before anything starts, with exit code 2 and a
// message that says what is wrong and what to do: a bad process count, a missing command,
// duplicate hosts, no Open MPI, an unknown network interface, a host ssh cannot reach without a
// password. Every check throws InvalidArgumentError with that message.
// Thread-safety: each function is independent; check_remote_hosts runs its probes in parallel
// child processes, not threads.

#include <string>
#include <vector>

#include "launcher/remote/environment.h"
#include "launcher/hosts/host_list.h"
#include "launcher/options/launch_options.h"
#include "launcher/hosts/local_host.h"

namespace runrun::launcher {

// -np is at least 1 and at most the slots the hosts give.
void check_process_count(const LaunchOptions& options);

// A command was given after the options.
void check_command(const LaunchOptions& options);

// The program (`program`, the command's first word) can be started here: with a '/', an
// existing executable file; otherwise an executable file found in `path_env` (the PATH the
// ranks get). Fails saying which, where it looked and what to do. Not called when every rank
// runs on another host (the program may exist only there).
void check_program_found(const std::string& program, const std::string& path_env);

// No host appears twice (names compared ignoring case; all names of this machine are one host).
void check_duplicate_hosts(const std::vector<HostSlots>& hosts, const LocalHostNames& local);

// Each comma-separated item of --network-interface is an interface of this machine or a CIDR
// block (a.b.c.d/n). `interfaces` are this machine's interface names (for the message too).
void check_network_interfaces(const std::string& spec, const std::vector<std::string>& interfaces);

// This machine's network interface names.
std::vector<std::string> local_interface_names();

// The absolute path of Open MPI's mpirun on PATH; throws when it is missing (naming the
// package to install) or when the mpirun found is not Open MPI's.
std::string find_open_mpi_mpirun(const Environment& env);

// The command that checks a host is reachable without a password: with no agent,
// `ssh -o BatchMode=yes -o ConnectTimeout=T [-p P] [-i F] HOST true`; with an agent (split
// like a shell line), `AGENT... HOST true`.
std::vector<std::string> remote_check_command(const std::string& host, const LaunchOptions& options,
                                              int connect_timeout_s);

// Runs the check on every host at once with a short time limit; throws naming every host that
// failed and the error its remote shell printed.
void check_remote_hosts(const std::vector<std::string>& hosts, const LaunchOptions& options,
                        int connect_timeout_s);

}  // namespace runrun::launcher
