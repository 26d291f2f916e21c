#pragma once
// Why: a job on `localhost:4` or on this machine's own name must not go through ssh, and two
// names of this machine in one host list are the same host. This knows this machine's names
// (localhost, loopback addresses, hostname, FQDN, the addresses of its interfaces).
// Thread-safety: immutable after construction; `detect()` reads system state once.

#include <string>
#include <string_view>
#include <vector>

namespace runrun::launcher {

class LocalHostNames {
 public:
  // The names of this machine as the system reports them now.
  static LocalHostNames detect();

  // Exactly `names` plus the fixed loopback names (for tests).
  explicit LocalHostNames(std::vector<std::string> names);

  // True for a loopback name/address (localhost, 127.x.y.z, ::1) or one of the names given.
  // Case-insensitive.
  bool is_local(std::string_view host) const;

  const std::vector<std::string>& names() const { return names_; }

 private:
  std::vector<std::string> names_;  // lower case
};

}  // namespace runrun::launcher
