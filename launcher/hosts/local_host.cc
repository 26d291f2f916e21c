#include "launcher/hosts/local_host.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <netinet/in.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstring>

namespace runrun::launcher {
namespace {

std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

bool is_loopback(const std::string& host) {
  if (host == "localhost" || host == "localhost.localdomain" || host == "ip6-localhost" ||
      host == "::1") {
    return true;
  }
  in_addr v4{};
  if (inet_pton(AF_INET, host.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  return false;
}

void add_interface_addresses(std::vector<std::string>* names) {
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return;
  for (const ifaddrs* it = list; it != nullptr; it = it->ifa_next) {
    if (it->ifa_addr == nullptr) continue;
    char text[INET6_ADDRSTRLEN] = {};
    const int family = it->ifa_addr->sa_family;
    const void* address = nullptr;
    if (family == AF_INET) {
      address =
          &reinterpret_cast<const sockaddr_in*>(static_cast<const void*>(it->ifa_addr))->sin_addr;
    } else if (family == AF_INET6) {
      address =
          &reinterpret_cast<const sockaddr_in6*>(static_cast<const void*>(it->ifa_addr))->sin6_addr;
    } else {
      continue;
    }
    if (inet_ntop(family, address, text, sizeof(text)) != nullptr) names->emplace_back(text);
  }
  freeifaddrs(list);
}

}  // namespace

LocalHostNames::LocalHostNames(std::vector<std::string> names) {
  for (auto& name : names) names_.push_back(lower(name));
}

LocalHostNames LocalHostNames::detect() {
  std::vector<std::string> names;
  char hostname[256] = {};
  if (gethostname(hostname, sizeof(hostname) - 1) == 0 && hostname[0] != '\0') {
    names.emplace_back(hostname);
    const std::string short_name(hostname, strcspn(hostname, "."));
    names.push_back(short_name);
    addrinfo hints{};
    hints.ai_flags = AI_CANONNAME;
    hints.ai_family = AF_UNSPEC;
    addrinfo* result = nullptr;
    if (getaddrinfo(hostname, nullptr, &hints, &result) == 0) {
      if (result != nullptr && result->ai_canonname != nullptr) {
        names.emplace_back(result->ai_canonname);
      }
      freeaddrinfo(result);
    }
  }
  add_interface_addresses(&names);
  return LocalHostNames(std::move(names));
}

bool LocalHostNames::is_local(std::string_view host) const {
  const std::string name = lower(host);
  if (is_loopback(name)) return true;
  return std::find(names_.begin(), names_.end(), name) != names_.end();
}

}  // namespace runrun::launcher
