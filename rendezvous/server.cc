#include "rendezvous/server.h"

#include <pthread.h>
#include <signal.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <list>
#include <set>
#include <vector>

#include "common/errors.h"
#include "rendezvous/server_connection.h"

namespace runrun::rendezvous {
namespace {

std::string peer_name(const sockaddr_storage& address) {
  char host[NI_MAXHOST] = "?";
  char port[NI_MAXSERV] = "?";
  getnameinfo(reinterpret_cast<const sockaddr*>(&address), sizeof(address), host, sizeof(host),
              port, sizeof(port), NI_NUMERICHOST | NI_NUMERICSERV);
  return std::string(host) + ":" + port;
}

[[noreturn]] void bind_failed(const std::string& address, uint16_t port, const std::string& why) {
  throw InvalidArgumentError(RUNRUN_WHERE,
                             "the rendezvous server cannot listen on " + address + ":" +
                                 std::to_string(port) + ": " + why +
                                 "; give an address of this host that the ranks can reach");
}

int listen_on(const std::string& address, uint16_t port, uint16_t* bound_port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(port);
  if (int rc = getaddrinfo(address.c_str(), service.c_str(), &hints, &found); rc != 0) {
    bind_failed(address, port, gai_strerror(rc));
  }
  std::unique_ptr<addrinfo, decltype(&freeaddrinfo)> guard(found, freeaddrinfo);
  const int fd = ::socket(found->ai_family, found->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) bind_failed(address, port, std::strerror(errno));
  const int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (::bind(fd, found->ai_addr, found->ai_addrlen) != 0 || ::listen(fd, 1024) != 0) {
    const std::string why = std::strerror(errno);
    ::close(fd);
    bind_failed(address, port, why);
  }
  sockaddr_storage bound{};
  socklen_t size = sizeof(bound);
  getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &size);
  *bound_port = bound.ss_family == AF_INET6
                    ? ntohs(reinterpret_cast<const sockaddr_in6*>(&bound)->sin6_port)
                    : ntohs(reinterpret_cast<const sockaddr_in*>(&bound)->sin_port);
  return fd;
}

}  // namespace

// The server thread's state: the store, the connections and the poll loop.
class RendezvousServer::Loop {
 public:
  Loop(RendezvousServer& server)
      : server_(server),
        store_(server.options_.max_store_bytes),
        limits_{server.options_.max_frame_bytes, server.options_.auth_timeout} {}

  void run() {
    std::vector<pollfd> fds;
    std::vector<ServerConnection*> owners;
    for (;;) {
      fds.assign({{server_.wake_fd_, POLLIN, 0}, {server_.listen_fd_, POLLIN, 0}});
      owners.assign(2, nullptr);
      for (auto& connection : connections_) {
        fds.push_back({connection->fd(), connection->poll_events(), 0});
        owners.push_back(connection.get());
      }
      if (::poll(fds.data(), fds.size(), poll_timeout_ms()) < 0 && errno != EINTR) return;
      if (fds[0].revents != 0) {  // stop()
        summarize_refusals(Clock::now());
        return;
      }
      const auto now = Clock::now();
      bool store_changed = false;
      for (size_t i = 2; i < fds.size(); ++i) {
        if (fds[i].revents != 0) owners[i]->on_events(fds[i].revents, store_, now, &store_changed);
      }
      for (auto& connection : connections_) connection->on_deadline(store_, now, &store_changed);
      while (store_changed) {
        store_changed = false;
        for (auto& connection : connections_) {
          connection->recheck_wait(store_, now, &store_changed);
        }
      }
      if (fds[1].revents & POLLIN) accept_all(now);
      retire_finished();
    }
  }

 private:
  int poll_timeout_ms() const {
    std::optional<Clock::time_point> next;
    for (const auto& connection : connections_) {
      if (auto deadline = connection->deadline()) {
        next = std::min(next.value_or(*deadline), *deadline);
      }
    }
    if (!next) return -1;
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(*next - Clock::now()).count() + 1;
    return static_cast<int>(std::clamp<int64_t>(left, 0, 60'000));
  }

  void accept_all(Clock::time_point now) {
    for (;;) {
      sockaddr_storage address{};
      socklen_t size = sizeof(address);
      const int fd = ::accept4(server_.listen_fd_, reinterpret_cast<sockaddr*>(&address), &size,
                               SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) return;  // EAGAIN, or a transient error (EMFILE...) retried on the next poll
      const int one = 1;
      setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
      connections_.push_back(std::make_unique<ServerConnection>(fd, peer_name(address),
                                                                server_.secret_, limits_, now));
    }
  }

  void retire_finished() {
    for (auto it = connections_.begin(); it != connections_.end();) {
      ServerConnection& connection = **it;
      if (!connection.refusal().empty() && !reported_.count(&connection)) {
        reported_.insert(&connection);
        server_.refused_.fetch_add(1);
        report_refusal(connection.peer(), connection.refusal(), Clock::now());
      }
      if (connection.finished()) {
        reported_.erase(&connection);
        it = connections_.erase(it);
      } else {
        ++it;
      }
    }
  }

  // The first kRefusalsShown refusals get a line each; later ones are counted and summed up in
  // one line at most every kRefusalSummaryPeriod (and when the server stops), so a flood of
  // connections (a port scan, a misconfigured job) cannot flood the launcher's output.
  static constexpr size_t kRefusalsShown = 10;
  static constexpr auto kRefusalSummaryPeriod = std::chrono::seconds(10);

  void report_refusal(const std::string& peer, const std::string& why, Clock::time_point now) {
    const Logger& logger = server_.options_.logger;
    if (!logger) return;
    ++refusals_;
    if (refusals_ <= kRefusalsShown) {
      logger->warn("rendezvous: refused the connection from {}: {}{}", peer, why,
                   refusals_ == kRefusalsShown
                       ? " (further refusals are counted, one line every 10 s)"
                       : "");
      last_summary_ = now;
      return;
    }
    ++unreported_;
    last_refused_ = peer + ": " + why;
    if (now - last_summary_ >= kRefusalSummaryPeriod) summarize_refusals(now);
  }

  void summarize_refusals(Clock::time_point now) {
    if (unreported_ == 0 || !server_.options_.logger) return;
    server_.options_.logger->warn(
        "rendezvous: refused {} more connection(s) ({} in all; the "
        "last from {})",
        unreported_, refusals_, last_refused_);
    unreported_ = 0;
    last_summary_ = now;
  }

  size_t refusals_ = 0;
  size_t unreported_ = 0;
  std::string last_refused_;
  Clock::time_point last_summary_{};

  RendezvousServer& server_;
  KeyValueStore store_;
  ConnectionLimits limits_;
  std::list<std::unique_ptr<ServerConnection>> connections_;
  std::set<const ServerConnection*> reported_;
};

RendezvousServer::RendezvousServer(JobSecret secret, ServerOptions options)
    : secret_(std::move(secret)), options_(std::move(options)) {
  RUNRUN_ENFORCE(!secret_.empty(), InvalidArgumentError,
                 "the rendezvous server needs a job secret (JobSecret::generate())");
  listen_fd_ = listen_on(options_.bind_address, options_.port, &port_);
  wake_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake_fd_ < 0) {
    ::close(listen_fd_);
    throw InternalError(RUNRUN_WHERE, std::string("eventfd failed: ") + std::strerror(errno));
  }
  loop_ = std::make_unique<Loop>(*this);
  // The serving thread takes no process signal (SIGTERM, SIGINT, SIGCHLD...): they belong to the
  // launcher's own handling, which may block them only after this thread exists.
  sigset_t all, previous;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &previous);
  thread_ = std::thread([this] {
    try {
      loop_->run();
    } catch (const std::exception& error) {  // out of memory or randomness: stop serving
      if (options_.logger) options_.logger->error("rendezvous server stopped: {}", error.what());
    }
  });
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
}

RendezvousServer::~RendezvousServer() { stop(); }

void RendezvousServer::stop() {
  if (!thread_.joinable()) return;
  const uint64_t one = 1;
  [[maybe_unused]] ssize_t written = ::write(wake_fd_, &one, sizeof(one));
  thread_.join();
  loop_.reset();  // closes every connection
  ::close(listen_fd_);
  ::close(wake_fd_);
}

}  // namespace runrun::rendezvous
