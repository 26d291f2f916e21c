#pragma once
// Test helpers: a server on 127.0.0.1 with a fresh secret, clients for it, a port nothing
// listens on, and a raw socket for speaking garbage to the server.

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

// A port on 127.0.0.1 that was free a moment ago (bound to port 0, then closed).
inline uint16_t unused_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address));
  socklen_t size = sizeof(address);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &size);
  ::close(fd);
  return ntohs(address.sin_port);
}

// A plain TCP connection to the server, for bytes no client would send.
struct RawConnection {
  explicit RawConnection(uint16_t port) : fd(connect_before("127.0.0.1", port, in_seconds(20))) {}
  ~RawConnection() { ::close(fd); }
  void send(const std::string& bytes) const { send_all_before(fd, bytes, in_seconds(20)); }
  std::string receive() const { return receive_frame_before(fd, 1 << 20, in_seconds(20)); }
  int fd;
};

}  // namespace runrun::rendezvous::test
