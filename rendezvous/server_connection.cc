#include "rendezvous/server_connection.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

#include "rendezvous/protocol.h"
#include "rendezvous/wire_codec.h"

namespace runrun::rendezvous {
namespace {

constexpr size_t kReadChunk = 64 * 1024;
// Before authentication only the small Auth message is legal: a peer that has not proved the
// secret gets no more than this much of the server's memory.
constexpr size_t kMaxAuthFrameBytes = 256;
// How long a refused connection is kept open to let the client read the refusal (closing with
// unread input would reset the connection and lose it).
constexpr std::chrono::seconds kLinger{2};

}  // namespace

ServerConnection::ServerConnection(int fd, std::string peer, const JobSecret& secret,
                                   ConnectionLimits limits, Clock::time_point now)
    : fd_(fd),
      peer_(std::move(peer)),
      secret_(secret),
      limits_(limits),
      nonce_(random_bytes(kNonceBytes)),
      deadline_(now + limits.auth_timeout) {
  PayloadWriter hello;
  hello.u8(static_cast<uint8_t>(MessageType::kHello));
  hello.string(kMagic);
  hello.u32(kProtocolVersion);
  hello.raw(nonce_);
  queue(hello.bytes());
}

ServerConnection::~ServerConnection() { ::close(fd_); }

short ServerConnection::poll_events() const {
  const bool writing = output_sent_ < output_.size();
  short events = POLLRDHUP;
  if (writing) events |= POLLOUT;
  switch (state_) {
    case State::kAuthenticating:
    case State::kServing:
      if (!writing) events |= POLLIN;
      break;
    case State::kClosing:
      if (!writing) events |= POLLIN;  // drain until the client closes
      break;
    case State::kWaiting:
    case State::kFinished:
      break;
  }
  return events;
}

void ServerConnection::queue(std::string_view payload) { output_ += frame(payload); }

void ServerConnection::write_output() {
  while (output_sent_ < output_.size()) {
    const ssize_t sent =
        ::send(fd_, output_.data() + output_sent_, output_.size() - output_sent_, MSG_NOSIGNAL);
    if (sent < 0 && errno == EINTR) continue;
    if (sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    if (sent <= 0) {
      state_ = State::kFinished;
      return;
    }
    output_sent_ += static_cast<size_t>(sent);
  }
  output_.clear();
  output_sent_ = 0;
  if (state_ == State::kClosing) ::shutdown(fd_, SHUT_WR);
}

void ServerConnection::read_input() {
  char chunk[kReadChunk];
  const ssize_t got = ::recv(fd_, chunk, sizeof(chunk), 0);
  if (got < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) return;
  if (got <= 0) {
    peer_closed_ = true;
    return;
  }
  if (state_ != State::kClosing) input_.append(chunk, static_cast<size_t>(got));
}

void ServerConnection::refuse(uint8_t reason, const std::string& text, Clock::time_point now) {
  PayloadWriter refused;
  refused.u8(static_cast<uint8_t>(MessageType::kRefused));
  refused.u8(reason);
  refused.string(text);
  queue(refused.bytes());
  refusal_ = text;
  input_.clear();
  wait_.reset();
  state_ = State::kClosing;
  deadline_ = now + kLinger;
}

void ServerConnection::handle_auth(std::string_view payload) {
  PayloadReader reader(payload);
  std::string client_nonce;
  std::string proof;
  try {
    if (static_cast<MessageType>(reader.u8()) != MessageType::kAuth) {
      throw MalformedPayload{"the first message is not an authentication"};
    }
    client_nonce = reader.raw(kNonceBytes);
    proof = reader.raw(reader.u8());
    reader.expect_end();
  } catch (const MalformedPayload& error) {
    refuse(static_cast<uint8_t>(RefusalReason::kProtocol),
           "not a runrun rendezvous client (" + error.what + ")", Clock::now());
    return;
  }
  if (proof.empty()) {
    refuse(static_cast<uint8_t>(RefusalReason::kNoSecret), "no job secret presented", Clock::now());
    return;
  }
  if (!equal_in_constant_time(proof, secret_.proof("client", nonce_, client_nonce))) {
    refuse(static_cast<uint8_t>(RefusalReason::kWrongSecret), "wrong job secret", Clock::now());
    return;
  }
  PayloadWriter welcome;
  welcome.u8(static_cast<uint8_t>(MessageType::kWelcome));
  welcome.raw(secret_.proof("server", nonce_, client_nonce));
  queue(welcome.bytes());
  state_ = State::kServing;
}

void ServerConnection::handle_frames(KeyValueStore& store, Clock::time_point now,
                                     bool* store_changed) {
  while ((state_ == State::kAuthenticating || state_ == State::kServing) &&
         output_sent_ == output_.size() && input_.size() >= kFrameHeaderBytes) {
    const size_t size = decode_frame_length(input_.data());
    const size_t limit =
        state_ == State::kAuthenticating ? kMaxAuthFrameBytes : limits_.max_frame_bytes;
    if (size == 0 || size > limit) {
      refuse(static_cast<uint8_t>(RefusalReason::kProtocol),
             "a frame of " + std::to_string(size) + " bytes (the limit is " +
                 std::to_string(limit) + ")",
             now);
      return;
    }
    if (input_.size() < kFrameHeaderBytes + size) return;
    const std::string payload = input_.substr(kFrameHeaderBytes, size);
    input_.erase(0, kFrameHeaderBytes + size);
    if (state_ == State::kAuthenticating) {
      handle_auth(payload);
    } else {
      HandledRequest handled = handle_request(payload, store, now);
      *store_changed = *store_changed || handled.store_changed;
      if (handled.wait) {
        wait_ = std::move(handled.wait);
        state_ = State::kWaiting;
      } else {
        queue(handled.answer);
      }
    }
    write_output();
  }
}

void ServerConnection::on_events(short revents, KeyValueStore& store, Clock::time_point now,
                                 bool* store_changed) {
  if (revents & (POLLERR | POLLNVAL)) {
    state_ = State::kFinished;
    return;
  }
  if (revents & POLLOUT) write_output();
  if (revents & (POLLIN | POLLHUP | POLLRDHUP)) {
    if (state_ == State::kWaiting) {
      peer_closed_ = true;  // the only input a waiting client can send is its goodbye
    } else if (state_ != State::kFinished) {
      read_input();
    }
  }
  handle_frames(store, now, store_changed);
  if (peer_closed_ && input_.size() < kFrameHeaderBytes) state_ = State::kFinished;
  if (peer_closed_ && state_ == State::kClosing) state_ = State::kFinished;
}

void ServerConnection::recheck_wait(KeyValueStore& store, Clock::time_point now,
                                    bool* store_changed) {
  if (state_ != State::kWaiting) return;
  auto answer = answer_parked_wait(*wait_, store, now);
  if (!answer) return;
  wait_.reset();
  state_ = State::kServing;
  queue(*answer);
  write_output();
  handle_frames(store, now, store_changed);
}

std::optional<Clock::time_point> ServerConnection::deadline() const {
  switch (state_) {
    case State::kAuthenticating:
    case State::kClosing:
      return deadline_;
    case State::kWaiting:
      return wait_->deadline;
    default:
      return std::nullopt;
  }
}

void ServerConnection::on_deadline(KeyValueStore& store, Clock::time_point now,
                                   bool* store_changed) {
  if (now < deadline().value_or(Clock::time_point::max())) return;
  if (state_ == State::kAuthenticating) {
    refuse(static_cast<uint8_t>(RefusalReason::kTimeout),
           "did not authenticate within " + std::to_string(limits_.auth_timeout.count()) + " ms",
           now);
    write_output();
  } else if (state_ == State::kWaiting) {
    recheck_wait(store, now, store_changed);
  } else if (state_ == State::kClosing) {
    state_ = State::kFinished;
  }
}

}  // namespace runrun::rendezvous
