#include "rendezvous/socket_io.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>

#include "rendezvous/wire_codec.h"

namespace runrun::rendezvous {
namespace {

int millis_until(SteadyTime deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                        deadline - std::chrono::steady_clock::now())
                        .count();
  return static_cast<int>(std::clamp<int64_t>(left, 0, 60'000));
}

// Waits for `events` on fd; throws kTimeout when the deadline passes first.
void await(int fd, short events, SteadyTime deadline) {
  for (;;) {
    pollfd entry{fd, events, 0};
    const int ready = ::poll(&entry, 1, millis_until(deadline));
    if (ready > 0) return;
    if (ready < 0 && errno != EINTR) {
      throw SocketFailure{SocketFailure::Kind::kError, std::strerror(errno)};
    }
    if (ready == 0 && std::chrono::steady_clock::now() >= deadline) {
      throw SocketFailure{SocketFailure::Kind::kTimeout, "timed out"};
    }
  }
}

SocketFailure failure_from_errno(int error) {
  const bool closed = error == ECONNRESET || error == EPIPE || error == ECONNREFUSED;
  return {closed ? SocketFailure::Kind::kClosed : SocketFailure::Kind::kError,
          std::strerror(error)};
}

void receive_exactly(int fd, char* out, size_t size, SteadyTime deadline) {
  size_t got = 0;
  while (got < size) {
    await(fd, POLLIN, deadline);
    const ssize_t n = ::recv(fd, out + got, size - got, 0);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n < 0) throw failure_from_errno(errno);
    if (n == 0) {
      throw SocketFailure{SocketFailure::Kind::kClosed, "connection closed by the server"};
    }
    got += static_cast<size_t>(n);
  }
}

}  // namespace

int connect_before(const std::string& host, uint16_t port, SteadyTime deadline) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(port);
  if (int rc = getaddrinfo(host.c_str(), service.c_str(), &hints, &found); rc != 0) {
    throw SocketFailure{SocketFailure::Kind::kError,
                        std::string("cannot resolve the address: ") + gai_strerror(rc)};
  }
  std::unique_ptr<addrinfo, decltype(&freeaddrinfo)> guard(found, freeaddrinfo);
  SocketFailure last{SocketFailure::Kind::kError, "no address"};
  for (addrinfo* info = found; info != nullptr; info = info->ai_next) {
    const int fd = ::socket(info->ai_family, info->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
      last = failure_from_errno(errno);
      continue;
    }
    try {
      if (::connect(fd, info->ai_addr, info->ai_addrlen) != 0) {
        if (errno != EINPROGRESS) throw failure_from_errno(errno);
        await(fd, POLLOUT, deadline);
        int error = 0;
        socklen_t size = sizeof(error);
        getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &size);
        if (error != 0) throw failure_from_errno(error);
      }
      const int one = 1;
      setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
      return fd;  // still non-blocking: every later call polls first
    } catch (const SocketFailure& failure) {
      ::close(fd);
      last = failure;
    }
  }
  throw last;
}

void send_all_before(int fd, std::string_view bytes, SteadyTime deadline) {
  size_t sent = 0;
  while (sent < bytes.size()) {
    await(fd, POLLOUT, deadline);
    const ssize_t n = ::send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n < 0) throw failure_from_errno(errno);
    sent += static_cast<size_t>(n);
  }
}

std::string receive_frame_before(int fd, size_t max_bytes, SteadyTime deadline) {
  char header[kFrameHeaderBytes];
  receive_exactly(fd, header, sizeof(header), deadline);
  const size_t size = decode_frame_length(header);
  if (size > max_bytes) {
    throw SocketFailure{SocketFailure::Kind::kError,
                        "the server sent a frame of " + std::to_string(size) +
                            " bytes, above the limit of " + std::to_string(max_bytes)};
  }
  std::string payload(size, '\0');
  receive_exactly(fd, payload.data(), size, deadline);
  return payload;
}

}  // namespace runrun::rendezvous
