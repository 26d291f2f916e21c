#pragma once
// Why: the hosts of a job come from `-H a:2,b:2` or from a hostfile; both are parsed here into one
// list of (host, slots) so every later step (preflight, the mpirun -H list, the rank layout)
// works on validated data. Errors name the entry or the file line and say what to write instead.
// Thread-safety: pure functions.

#include <string>
#include <string_view>
#include <vector>

namespace runrun::launcher {

struct HostSlots {
  std::string name;  // as written (IPv6 without brackets)
  int slots = 1;

  bool operator==(const HostSlots&) const = default;
};

// Parses `-H`: comma-separated `host`, `host:N` or `[ipv6]:N`. A host without `:N` has 1 slot.
// Throws InvalidArgumentError naming the bad entry.
std::vector<HostSlots> parse_host_list(std::string_view text);

// Parses hostfile content: one host per line as `host`, `host:N` or `host slots=N`; `#` starts
// a comment; blank lines are skipped. `source` (the file name) prefixes every error message,
// which also gives the line number and the line. A bare `host` has `default_slots` slots
// (--slots-per-host for a discovery script's output).
std::vector<HostSlots> parse_hostfile(std::string_view content, std::string_view source,
                                      int default_slots = 1);

// Reads and parses the hostfile at `path`; a missing or unreadable file is an
// InvalidArgumentError that names the path.
std::vector<HostSlots> read_hostfile(const std::string& path);

// Sum of the slots.
int total_slots(const std::vector<HostSlots>& hosts);

// The hosts a job of `num_proc` processes uses: one slot per process, filled in host order, so
// the last used host may get fewer processes than it has slots and later hosts none.
// Requires num_proc <= total_slots(hosts).
std::vector<HostSlots> hosts_for_processes(const std::vector<HostSlots>& hosts, int num_proc);

// `a:2,b:2`, as mpirun's -H wants it (IPv6 names in brackets).
std::string format_host_list(const std::vector<HostSlots>& hosts);

}  // namespace runrun::launcher
