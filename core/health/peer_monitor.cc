#include "core/health/peer_monitor.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <sstream>

#include "common/errors.h"
#include "common/fork_generation.h"

namespace runrun {
namespace {

constexpr char kHeartbeat = 'h';         // alive, not waiting in negotiation
constexpr char kHeartbeatWaiting = 'w';  // alive, waiting in negotiation with ops pending
constexpr char kGoodbye = 'g';
constexpr char kHeartbeatFailed = 'f';  // alive, but its runtime failed: no more collectives

struct Hello {
  uint64_t job_key;
  int32_t rank;
};

std::string os_error(const char* what) { return std::string(what) + ": " + std::strerror(errno); }

std::vector<std::string> local_ipv4_addresses() {
  std::vector<std::string> others, loopback;
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) == 0) {
    for (ifaddrs* a = list; a; a = a->ifa_next) {
      if (!a->ifa_addr || a->ifa_addr->sa_family != AF_INET) continue;
      char text[INET_ADDRSTRLEN] = {0};
      const auto* in = reinterpret_cast<const sockaddr_in*>(static_cast<const void*>(a->ifa_addr));
      inet_ntop(AF_INET, &in->sin_addr, text, sizeof(text));
      (std::string(text).rfind("127.", 0) == 0 ? loopback : others).push_back(text);
    }
    freeifaddrs(list);
  }
  others.insert(others.end(), loopback.begin(), loopback.end());  // loopback last
  return others;
}

bool write_all(int fd, const void* data, size_t n) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    ssize_t w = ::send(fd, p, n, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

// Reads exactly n bytes or fails at the deadline.
bool read_all(int fd, void* data, size_t n, std::chrono::steady_clock::time_point deadline) {
  char* p = static_cast<char*>(data);
  while (n > 0) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd pfd{fd, POLLIN, 0};
    int ready = ::poll(&pfd, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) return false;
    ssize_t r = ::recv(fd, p, n, 0);
    if (r <= 0) return false;
    p += r;
    n -= static_cast<size_t>(r);
  }
  return true;
}

// Non-blocking connect with a deadline; -1 on failure.
int connect_with_deadline(const std::string& ip, int port,
                          std::chrono::steady_clock::time_point deadline) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  if (inet_pton(AF_INET, ip.c_str(), &addr.sin_addr) != 1) {
    ::close(fd);
    return -1;
  }
  const auto* sa = reinterpret_cast<const sockaddr*>(static_cast<const void*>(&addr));
  int rc = ::connect(fd, sa, sizeof(addr));
  if (rc < 0 && errno == EINPROGRESS) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    pollfd pfd{fd, POLLOUT, 0};
    int error = 0;
    socklen_t len = sizeof(error);
    if (left.count() > 0 && ::poll(&pfd, 1, static_cast<int>(left.count())) == 1 &&
        ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &len) == 0 && error == 0) {
      rc = 0;
    }
  }
  if (rc != 0) {
    ::close(fd);
    return -1;
  }
  int flags = ::fcntl(fd, F_GETFL);
  ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  return fd;
}

struct ParsedAddress {
  std::string host;
  std::vector<std::string> ips;
  int port = 0;
};

ParsedAddress parse_address(const std::string& text) {
  ParsedAddress out;
  size_t a = text.find('|');
  size_t b = text.rfind('|');
  out.host = text.substr(0, a);
  std::stringstream ips(text.substr(a + 1, b - a - 1));
  for (std::string ip; std::getline(ips, ip, ',');) out.ips.push_back(ip);
  out.port = std::stoi(text.substr(b + 1));
  return out;
}

}  // namespace

PeerMonitor::PeerMonitor(int rank, int size, std::chrono::milliseconds interval,
                         std::chrono::milliseconds timeout, Logger logger, bool loopback_only)
    : rank_(rank),
      size_(size),
      interval_(interval),
      timeout_(timeout),
      logger_(std::move(logger)),
      peer_fds_(static_cast<size_t>(size), -1),
      peer_hosts_(static_cast<size_t>(size)),
      peer_state_(static_cast<size_t>(size), kHeartbeat) {
  listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  RUNRUN_ENFORCE(listen_fd_ >= 0, PeerFailureError, os_error("peer monitor: socket"));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(loopback_only ? INADDR_LOOPBACK : INADDR_ANY);
  socklen_t len = sizeof(addr);
  auto* sa = reinterpret_cast<sockaddr*>(static_cast<void*>(&addr));
  bool ok = ::bind(listen_fd_, sa, sizeof(addr)) == 0 && ::listen(listen_fd_, SOMAXCONN) == 0 &&
            ::getsockname(listen_fd_, sa, &len) == 0;
  RUNRUN_ENFORCE(ok, PeerFailureError, os_error("peer monitor: cannot listen on a TCP port"));
  RUNRUN_ENFORCE(::pipe2(wake_pipe_, O_CLOEXEC | O_NONBLOCK) == 0, PeerFailureError,
                 os_error("peer monitor: pipe"));
  char host[256] = {0};
  ::gethostname(host, sizeof(host) - 1);
  std::string ips = loopback_only ? "127.0.0.1" : "";
  if (!loopback_only) {
    for (const std::string& ip : local_ipv4_addresses()) ips += (ips.empty() ? "" : ",") + ip;
  }
  address_ = std::string(host) + "|" + ips + "|" + std::to_string(ntohs(addr.sin_port));
}

PeerMonitor::~PeerMonitor() {
  stop();
  for (int fd : peer_fds_) {
    if (fd < 0) continue;
    keep_in_forked_children(fd);
    ::close(fd);
  }
  if (listen_fd_ >= 0) ::close(listen_fd_);
  if (wake_pipe_[0] >= 0) ::close(wake_pipe_[0]);
  if (wake_pipe_[1] >= 0) ::close(wake_pipe_[1]);
}

void PeerMonitor::start(const std::vector<std::string>& addresses, uint64_t job_key, OnLost on_lost,
                        std::chrono::milliseconds connect_timeout) {
  on_lost_ = std::move(on_lost);
  for (size_t r = 0; r < peer_hosts_.size(); ++r) peer_hosts_[r] = parse_address(addresses[r]).host;
  auto deadline = std::chrono::steady_clock::now() + connect_timeout;
  connect_to_lower_ranks(addresses, job_key, deadline);
  accept_higher_ranks(job_key, deadline);
  thread_ = std::thread([this] { run(); });
}

void PeerMonitor::connect_to_lower_ranks(const std::vector<std::string>& addresses,
                                         uint64_t job_key,
                                         std::chrono::steady_clock::time_point deadline) {
  for (int peer = 0; peer < rank_; ++peer) {
    ParsedAddress target = parse_address(addresses[static_cast<size_t>(peer)]);
    int connected = -1;
    while (connected < 0 && std::chrono::steady_clock::now() < deadline) {
      for (const std::string& ip : target.ips) {
        auto now = std::chrono::steady_clock::now();
        int fd = connect_with_deadline(ip, target.port, now + std::chrono::seconds(2));
        if (fd < 0) continue;
        Hello mine{job_key, rank_}, theirs{};
        if (write_all(fd, &mine, sizeof(mine)) &&
            read_all(fd, &theirs, sizeof(theirs), now + std::chrono::seconds(7)) &&
            theirs.job_key == job_key && theirs.rank == peer) {
          connected = fd;
          break;
        }
        ::close(fd);  // someone else's port (another job on this host): try the next address
      }
      if (connected < 0) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    RUNRUN_ENFORCE(connected >= 0, PeerFailureError,
                   "rank " + std::to_string(rank_) + " could not reach rank " +
                       std::to_string(peer) + " on host " + target.host + " (" +
                       addresses[static_cast<size_t>(peer)] +
                       ") for peer monitoring; check that TCP between the hosts is open (see "
                       "docs/troubleshooting.md)");
    peer_fds_[static_cast<size_t>(peer)] = connected;
    close_in_forked_children(connected);
  }
}

void PeerMonitor::accept_higher_ranks(uint64_t job_key,
                                      std::chrono::steady_clock::time_point deadline) {
  int missing = size_ - 1 - rank_;
  while (missing > 0) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    pollfd pfd{listen_fd_, POLLIN, 0};
    int ready = left.count() > 0 ? ::poll(&pfd, 1, static_cast<int>(left.count())) : 0;
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) {
      std::string who;
      for (int r = rank_ + 1; r < size_; ++r) {
        if (peer_fds_[static_cast<size_t>(r)] >= 0) continue;
        who += (who.empty() ? "" : ", ") + std::to_string(r);
      }
      throw PeerFailureError(RUNRUN_WHERE, "rank " + std::to_string(rank_) + ": ranks [" + who +
                                               "] did not connect for peer monitoring in time; "
                                               "are they running and can they reach this host?");
    }
    int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    Hello theirs{}, mine{job_key, rank_};
    bool ok = read_all(fd, &theirs, sizeof(theirs),
                       std::chrono::steady_clock::now() + std::chrono::seconds(5)) &&
              theirs.job_key == job_key && theirs.rank > rank_ && theirs.rank < size_ &&
              peer_fds_[static_cast<size_t>(theirs.rank)] < 0 && write_all(fd, &mine, sizeof(mine));
    if (!ok) {
      ::close(fd);
      continue;
    }
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    peer_fds_[static_cast<size_t>(theirs.rank)] = fd;
    close_in_forked_children(fd);
    --missing;
  }
}

std::vector<int> PeerMonitor::idle_peers() const {
  std::vector<int> idle;
  std::lock_guard<std::mutex> lock(state_mutex_);
  for (int r = 0; r < size_; ++r) {
    if (r != rank_ && peer_state_[static_cast<size_t>(r)] == kHeartbeat) idle.push_back(r);
  }
  return idle;
}

void PeerMonitor::stop() {
  if (stopping_.exchange(true)) return;
  if (wake_pipe_[1] >= 0) {
    char c = 1;
    [[maybe_unused]] ssize_t ignored = ::write(wake_pipe_[1], &c, 1);
  }
  if (thread_.joinable()) thread_.join();
  for (int fd : peer_fds_) {
    if (fd >= 0) write_all(fd, &kGoodbye, 1);
  }
}

void PeerMonitor::crash_for_test() {
  stopping_ = true;
  if (wake_pipe_[1] >= 0) {
    char c = 1;
    [[maybe_unused]] ssize_t ignored = ::write(wake_pipe_[1], &c, 1);
  }
  if (thread_.joinable()) thread_.join();
  for (int& fd : peer_fds_) {
    if (fd < 0) continue;
    keep_in_forked_children(fd);
    ::close(fd);
    fd = -1;
  }
}

void PeerMonitor::lose(int rank, PeerLoss how, const std::string& why) {
  if (lost_reported_) return;
  lost_reported_ = true;
  std::string text = "lost rank " + std::to_string(rank) + " (host " +
                     peer_hosts_[static_cast<size_t>(rank)] + "): " + why;
  logger_->error("{}", text);
  if (on_lost_) on_lost_(rank, how, text);
}

void PeerMonitor::run() {
  Watch watch(static_cast<size_t>(size_), Clock::now());
  while (!stopping_) {
    Clock::time_point now = Clock::now();
    if (now - watch.last_pass > timeout_ / 2) {
      // This process itself was stopped (SIGSTOP, a debugger) or starved: the peers' beats wait
      // unread in the sockets. Silence is judged from now on, not from before the gap.
      std::fill(watch.last_heard.begin(), watch.last_heard.end(), now);
    }
    watch.last_pass = now;
    if (now >= watch.next_beat) {
      send_heartbeats(watch);
      watch.next_beat = now + interval_;
      if (tick_) tick_();
    }
    judge_silence(watch, now);
    poll_peers(watch);
  }
}

PeerMonitor::Watch::Watch(size_t size, Clock::time_point now)
    : last_heard(size, now),
      gone(size, false),
      failed(size, false),
      next_beat(now),
      last_pass(now) {}

void PeerMonitor::send_heartbeats(const Watch& watch) {
  char beat = is_waiting_ && is_waiting_() ? kHeartbeatWaiting : kHeartbeat;
  if (is_failed_ && is_failed_()) beat = kHeartbeatFailed;
  for (int r = 0; r < size_; ++r) {
    int fd = peer_fds_[static_cast<size_t>(r)];
    if (fd >= 0 && !watch.gone[static_cast<size_t>(r)] && !frozen_) {
      ::send(fd, &beat, 1, MSG_NOSIGNAL | MSG_DONTWAIT);
    }
  }
}

void PeerMonitor::judge_silence(Watch& watch, Clock::time_point now) {
  for (int r = 0; r < size_; ++r) {
    const auto index = static_cast<size_t>(r);
    if (peer_fds_[index] >= 0 && !watch.gone[index] && now - watch.last_heard[index] > timeout_) {
      watch.gone[index] = true;
      lose(r, PeerLoss::kSilent,
           "it stopped answering (no heartbeat for " +
               fmt::format("{:g}", static_cast<double>(timeout_.count()) / 1000.0) +
               " s, RUNRUN_PEER_TIMEOUT): the process is stopped or hung, or its host or the "
               "network failed");
    }
  }
}

void PeerMonitor::poll_peers(Watch& watch) {
  std::vector<pollfd>& fds = watch.fds;
  fds.clear();
  fds.push_back(pollfd{wake_pipe_[0], POLLIN, 0});
  std::vector<int> ranks_of_fds{-1};
  for (int r = 0; r < size_; ++r) {
    if (peer_fds_[static_cast<size_t>(r)] >= 0 && !watch.gone[static_cast<size_t>(r)]) {
      fds.push_back(pollfd{peer_fds_[static_cast<size_t>(r)], POLLIN, 0});
      ranks_of_fds.push_back(r);
    }
  }
  auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(watch.next_beat - Clock::now());
  int ready = ::poll(fds.data(), fds.size(), static_cast<int>(std::max<int64_t>(wait.count(), 1)));
  if (ready <= 0) return;
  for (size_t i = 1; i < fds.size(); ++i) {
    if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
    read_peer(watch, ranks_of_fds[i], fds[i].fd);
  }
}

void PeerMonitor::read_peer(Watch& watch, int r, int fd) {
  const auto index = static_cast<size_t>(r);
  char buffer[256];
  ssize_t n = ::recv(fd, buffer, sizeof(buffer), MSG_DONTWAIT);
  if (n > 0) {
    watch.last_heard[index] = Clock::now();
    if (std::memchr(buffer, kGoodbye, static_cast<size_t>(n))) {
      watch.gone[index] = true;
      if (on_left_) on_left_(r);
    } else if (!watch.failed[index] &&
               std::memchr(buffer, kHeartbeatFailed, static_cast<size_t>(n))) {
      watch.failed[index] = true;
      if (on_failed_) on_failed_(r);
    }
    std::lock_guard<std::mutex> lock(state_mutex_);
    peer_state_[index] = buffer[n - 1];
    return;
  }
  if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
  watch.gone[index] = true;
  lose(r, PeerLoss::kClosed,
       n == 0 ? "its process exited or was killed (connection closed without goodbye)"
              : "its process exited or was killed, or the network failed (" +
                    std::string(std::strerror(errno)) + ")");
}

}  // namespace runrun
