#include "rendezvous/local_address.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "common/errors.h"

namespace runrun::rendezvous {
namespace {

std::vector<std::string> split_commas(const std::string& text) {
  std::vector<std::string> items;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    if (comma > start) items.push_back(text.substr(start, comma - start));
    start = comma + 1;
  }
  return items;
}

// a.b.c.d/n -> (network, mask) in host byte order; false when `item` is not one.
bool parse_cidr(const std::string& item, uint32_t& network, uint32_t& mask) {
  const std::size_t slash = item.find('/');
  if (slash == std::string::npos) return false;
  in_addr address{};
  if (inet_pton(AF_INET, item.substr(0, slash).c_str(), &address) != 1) return false;
  char* end = nullptr;
  const long bits = std::strtol(item.c_str() + slash + 1, &end, 10);
  if (*end != '\0' || bits < 0 || bits > 32 || slash + 1 == item.size()) return false;
  mask = bits == 0 ? 0 : ~uint32_t{0} << (32 - bits);
  network = ntohl(address.s_addr) & mask;
  return true;
}

std::string to_text(const in_addr& address) {
  char text[INET_ADDRSTRLEN] = {};
  inet_ntop(AF_INET, &address, text, sizeof(text));
  return text;
}

// The first IPv4 address of this host that `item` (an interface name or a CIDR block) selects.
std::string address_selected_by_item(const std::string& item) {
  uint32_t network = 0, mask = 0;
  const bool cidr = parse_cidr(item, network, mask);
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return "";
  std::string found;
  for (ifaddrs* entry = list; entry != nullptr && found.empty(); entry = entry->ifa_next) {
    if (entry->ifa_addr == nullptr || entry->ifa_addr->sa_family != AF_INET) continue;
    const in_addr address = reinterpret_cast<const sockaddr_in*>(entry->ifa_addr)->sin_addr;
    const bool selected =
        cidr ? (ntohl(address.s_addr) & mask) == network : item == entry->ifa_name;
    if (selected) found = to_text(address);
  }
  freeifaddrs(list);
  return found;
}

}  // namespace

std::string address_selected_by(const std::string& spec) {
  for (const auto& item : split_commas(spec)) {
    const std::string address = address_selected_by_item(item);
    if (!address.empty()) return address;
  }
  return "";
}

// Connecting a UDP socket only chooses the route: the kernel's source address for it is the
// answer.
std::string address_towards(const std::string& host) {
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_DGRAM;
  addrinfo* found = nullptr;
  const int rc = getaddrinfo(host.c_str(), "9", &hints, &found);
  RUNRUN_ENFORCE(rc == 0 && found != nullptr, InvalidArgumentError,
                 "host '" + host + "' does not resolve to an IPv4 address (" + gai_strerror(rc) +
                     "); name the network to use with runrun --network-interface");
  const int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  sockaddr_in local{};
  socklen_t length = sizeof(local);
  const bool ok = fd >= 0 && connect(fd, found->ai_addr, found->ai_addrlen) == 0 &&
                  getsockname(fd, reinterpret_cast<sockaddr*>(&local), &length) == 0;
  const int error = errno;
  if (fd >= 0) close(fd);
  freeaddrinfo(found);
  RUNRUN_ENFORCE(ok, InvalidArgumentError,
                 "no route from this host to '" + host + "': " + std::strerror(error) +
                     "; name the network to use with runrun --network-interface");
  return to_text(local.sin_addr);
}

}  // namespace runrun::rendezvous
