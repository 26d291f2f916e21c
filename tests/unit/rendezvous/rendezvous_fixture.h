#pragma once
// Why: test helpers: a server on 127.0.0.1 with a fresh secret, clients for it, a port nothing
// listens on (held), and a raw socket for speaking garbage to the server.
// Thread-safety: TestServer::client() may be called from any thread (the server serves each
// connection); a ReservedPort or RawConnection belongs to the thread that made it.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <memory>
#include <string>

#include "rendezvous/client.h"
#include "rendezvous/server.h"
#include "rendezvous/socket_io.h"

namespace runrun::rendezvous::test {

inline std::chrono::steady_clock::time_point in_seconds(int seconds) {
  return std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
}

struct TestServer {
  JobSecret secret = JobSecret::generate();
  RendezvousServer server{secret, ServerOptions{}};

  ClientOptions options(JobSecret client_secret) const {
    ClientOptions options;
    options.host = "127.0.0.1";
    options.port = server.port();
    options.secret = std::move(client_secret);
    options.connect_timeout = std::chrono::seconds(20);
    options.request_timeout = std::chrono::seconds(20);
    options.who = "test rank";
    return options;
  }
  std::unique_ptr<RendezvousClient> client() const {
    return std::make_unique<RendezvousClient>(options(secret));
  }
};

// A port on 127.0.0.1 that nothing listens on, held for as long as this object lives: bound
// with SO_REUSEADDR but not listening, so connections to it are refused, the kernel gives it to
// no other socket (no bind elsewhere, no client's own end: a client retrying a free port can
// connect to itself), and a RendezvousServer, which sets SO_REUSEADDR too, can listen on it.
// A port closed right after it was found free could be taken by a test running beside this one.
struct ReservedPort {
  ReservedPort() : fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) {
    const int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address));
    socklen_t size = sizeof(address);
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &size);
    port = ntohs(address.sin_port);
  }
  ~ReservedPort() { ::close(fd); }
  ReservedPort(const ReservedPort&) = delete;
  ReservedPort& operator=(const ReservedPort&) = delete;
  int fd;
  uint16_t port = 0;
};

// A plain TCP connection to the server, for bytes no client would send.
struct RawConnection {
  explicit RawConnection(uint16_t port) : fd(connect_before("127.0.0.1", port, in_seconds(20))) {}
  ~RawConnection() { ::close(fd); }
  void send(const std::string& bytes) const { send_all_before(fd, bytes, in_seconds(20)); }
  std::string receive() const { return receive_frame_before(fd, 1 << 20, in_seconds(20)); }
  int fd;
};

}  // namespace runrun::rendezvous::test
