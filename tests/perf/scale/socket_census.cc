#include "socket_census.h"

#include <dirent.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>
#include <unordered_map>

namespace runrun::perf {
namespace {

constexpr int kTcpEstablished = 0x01;
constexpr int kTcpListen = 0x0A;

// inode -> TCP state of every socket in this network namespace's table `path`.
void read_tcp_table(const char* path, std::unordered_map<unsigned long, int>& states) {
  std::ifstream table(path);
  std::string line;
  std::getline(table, line);  // header
  while (std::getline(table, line)) {
    std::istringstream fields(line);
    std::string slot, local, remote, state, queues, timer, retransmits, uid, timeout;
    unsigned long inode = 0;
    fields >> slot >> local >> remote >> state >> queues >> timer >> retransmits >> uid >>
        timeout >> inode;
    if (fields) states[inode] = std::stoi(state, nullptr, 16);
  }
}

}  // namespace

SocketCensus count_own_sockets() {
  std::unordered_map<unsigned long, int> tcp;
  read_tcp_table("/proc/self/net/tcp", tcp);
  read_tcp_table("/proc/self/net/tcp6", tcp);
  SocketCensus census;
  DIR* fds = opendir("/proc/self/fd");
  if (fds == nullptr) return census;
  const std::string prefix = "socket:[";
  while (const dirent* entry = readdir(fds)) {
    if (entry->d_name[0] == '.') continue;
    const std::string path = std::string("/proc/self/fd/") + entry->d_name;
    char target[256];
    const ssize_t length = readlink(path.c_str(), target, sizeof(target) - 1);
    if (length <= 0) continue;
    const std::string link(target, static_cast<size_t>(length));
    if (link.compare(0, prefix.size(), prefix) != 0) continue;
    const unsigned long inode = std::stoul(link.substr(prefix.size()));
    const auto found = tcp.find(inode);
    if (found == tcp.end()) {
      ++census.other;
    } else if (found->second == kTcpEstablished) {
      ++census.tcp_established;
    } else if (found->second == kTcpListen) {
      ++census.tcp_listening;
    } else {
      ++census.tcp_other;
    }
  }
  closedir(fds);
  return census;
}

}  // namespace runrun::perf
