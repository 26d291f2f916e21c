#pragma once
// Why: the client's blocking socket calls, each bounded by a deadline (poll before every read
// and write), so that no rendezvous call can hang on a silent server.
// Thread-safety: free functions; one thread per socket at a time.

#include <chrono>
#include <string>
#include <string_view>

namespace runrun::rendezvous {

using SteadyTime = std::chrono::steady_clock::time_point;

// Why a socket call failed: kClosed (the peer closed or reset it), kTimeout (the deadline
// passed), kError (anything else). `what` is the OS's words.
struct SocketFailure {
  enum class Kind { kClosed, kTimeout, kError } kind;
  std::string what;
};

// One TCP connection attempt to host:port, bounded by `deadline`; returns a blocking socket with
// TCP_NODELAY. Throws SocketFailure (refused, unreachable, unresolvable, timed out).
int connect_before(const std::string& host, uint16_t port, SteadyTime deadline);

// Sends all of `bytes` or throws SocketFailure.
void send_all_before(int fd, std::string_view bytes, SteadyTime deadline);

// Reads one frame's payload. A frame larger than `max_bytes` throws SocketFailure(kError).
std::string receive_frame_before(int fd, size_t max_bytes, SteadyTime deadline);

}  // namespace runrun::rendezvous
