#include "rendezvous/client.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <thread>

#include "common/env_names.h"
#include "common/errors.h"
#include "common/knobs.h"
#include "rendezvous/socket_io.h"
#include "rendezvous/wire_codec.h"

namespace runrun::rendezvous {
namespace {

using std::chrono::milliseconds;
using std::chrono::steady_clock;

constexpr size_t kMaxHandshakeFrameBytes = 4096;
constexpr milliseconds kFirstRetryDelay{20};
constexpr milliseconds kMaxRetryDelay{1000};

std::string seconds_text(milliseconds duration) {
  return fmt::format("{:g} s", static_cast<double>(duration.count()) / 1000.0);
}

std::string request(MessageType type, uint64_t generation) {
  PayloadWriter writer;
  writer.u8(static_cast<uint8_t>(type));
  writer.u64(generation);
  return std::move(writer.bytes());
}

std::string with_key(MessageType type, uint64_t generation, const std::string& key) {
  PayloadWriter writer;
  writer.string(key);
  return request(type, generation) + writer.bytes();
}

std::string keys_field(const std::vector<std::string>& keys) {
  PayloadWriter writer;
  writer.u32(static_cast<uint32_t>(keys.size()));
  for (const std::string& key : keys) writer.string(key);
  return std::move(writer.bytes());
}

MessageType type_of(const std::string& answer) {
  return answer.empty() ? MessageType{} : static_cast<MessageType>(answer[0]);
}

// Runs `parse` over an answer (its type byte already checked by the caller or skipped here); a
// malformed answer is the server's fault and becomes a PeerFailureError.
template <typename Parse>
auto decoded(const std::string& answer, const std::string& where, Parse parse) {
  try {
    PayloadReader reader(answer);
    reader.u8();
    return parse(reader);
  } catch (const MalformedPayload& error) {
    throw PeerFailureError(RUNRUN_WHERE,
                           where + ": malformed answer from the server (" + error.what + ")");
  }
}

}  // namespace

RendezvousClient::RendezvousClient(ClientOptions options) : options_(std::move(options)) {
  connect_with_retries();
}

RendezvousClient::~RendezvousClient() {
  if (fd_ >= 0) ::close(fd_);
}

std::string RendezvousClient::server_address() const {
  return options_.host + ":" + std::to_string(options_.port);
}

void RendezvousClient::connect_with_retries() {
  const auto deadline = steady_clock::now() + options_.connect_timeout;
  milliseconds delay = kFirstRetryDelay;
  std::string last_error;
  for (;;) {
    int fd = -1;
    try {
      fd = connect_before(options_.host, options_.port, deadline);
      authenticate(fd, deadline);
      fd_ = fd;
      return;
    } catch (const SocketFailure& failure) {
      if (fd >= 0) ::close(fd);
      last_error = failure.what;
    } catch (...) {
      if (fd >= 0) ::close(fd);
      throw;
    }
    if (steady_clock::now() + delay >= deadline) break;
    std::this_thread::sleep_for(delay);
    delay = std::min(delay * 2, kMaxRetryDelay);
  }
  throw TimeoutError(
      RUNRUN_WHERE,
      options_.who + " could not reach the rendezvous server at " + server_address() + " within " +
          seconds_text(options_.connect_timeout) + " (last error: " + last_error +
          "); check that the runrun launcher of this job is still running and that this host "
          "can reach that address (firewall, routing); " +
          std::string(knobs::kRendezvousTimeout.env_name) + " sets how long to keep trying");
}

void RendezvousClient::authenticate(int fd, steady_clock::time_point deadline) {
  const std::string where = "the rendezvous server at " + server_address();
  std::string server_nonce;
  const std::string greeting = receive_frame_before(fd, kMaxHandshakeFrameBytes, deadline);
  try {
    PayloadReader hello(greeting);
    if (static_cast<MessageType>(hello.u8()) != MessageType::kHello || hello.string() != kMagic) {
      throw MalformedPayload{"no runrun rendezvous greeting"};
    }
    const uint32_t version = hello.u32();
    if (version != kProtocolVersion) {
      throw MalformedPayload{"protocol version " + std::to_string(version) + ", this rank speaks " +
                             std::to_string(kProtocolVersion)};
    }
    server_nonce = hello.raw(kNonceBytes);
  } catch (const MalformedPayload& error) {
    throw PeerFailureError(RUNRUN_WHERE, options_.who + ": " + server_address() +
                                             " is not a compatible runrun rendezvous server (" +
                                             error.what + "); check " + env::kRendezvousAddr +
                                             " and " + env::kRendezvousPort);
  }
  const std::string client_nonce = random_bytes(kNonceBytes);
  const std::string proof = options_.secret.proof("client", server_nonce, client_nonce);
  PayloadWriter auth;
  auth.u8(static_cast<uint8_t>(MessageType::kAuth));
  auth.raw(client_nonce);
  auth.u8(static_cast<uint8_t>(proof.size()));
  auth.raw(proof);
  send_all_before(fd, frame(auth.bytes()), deadline);

  const std::string answer = receive_frame_before(fd, kMaxHandshakeFrameBytes, deadline);
  PayloadReader reader(answer);
  try {
    const auto type = static_cast<MessageType>(reader.u8());
    if (type == MessageType::kRefused) {
      const auto reason = static_cast<RefusalReason>(reader.u8());
      const std::string text = reader.string();
      std::string advice;
      if (reason == RefusalReason::kWrongSecret) {
        advice =
            "; this process holds a different secret than the job that server belongs to: "
            "start ranks with the runrun launcher of this job (it hands each rank " +
            std::string(env::kRendezvousSecret) + "; never set it by hand)";
      } else if (reason == RefusalReason::kNoSecret) {
        advice = std::string("; ") + env::kRendezvousSecret +
                 " was not set in this process (it is set by the runrun launcher and read once "
                 "at start-up): start ranks with `runrun`";
      }
      throw InvalidArgumentError(
          RUNRUN_WHERE, where + " refused this rank (" + options_.who + "): " + text + advice);
    }
    if (type != MessageType::kWelcome) throw MalformedPayload{"no welcome"};
    const std::string server_proof = reader.raw(kProofBytes);
    reader.expect_end();
    if (!equal_in_constant_time(server_proof,
                                options_.secret.proof("server", server_nonce, client_nonce))) {
      throw MalformedPayload{"it did not prove the job secret"};
    }
  } catch (const MalformedPayload& error) {
    throw PeerFailureError(RUNRUN_WHERE, options_.who + ": " + where +
                                             " is not this job's rendezvous server (" + error.what +
                                             "); check " + env::kRendezvousAddr + " and " +
                                             env::kRendezvousPort);
  }
}

std::string RendezvousClient::round_trip(const std::string& payload, const char* op,
                                         MessageType expected, milliseconds extra_time) {
  const std::string where = options_.who + ": rendezvous " + op + " at " + server_address();
  if (!broken_.empty()) {
    throw PeerFailureError(RUNRUN_WHERE, where + " is impossible: " + broken_);
  }
  RUNRUN_ENFORCE(payload.size() <= options_.max_frame_bytes, InvalidArgumentError,
                 where + ": the request is " + std::to_string(payload.size()) +
                     " bytes, above the rendezvous limit of " +
                     std::to_string(options_.max_frame_bytes) + " bytes");
  const auto deadline = steady_clock::now() + options_.request_timeout + extra_time;
  std::string answer;
  try {
    send_all_before(fd_, frame(payload), deadline);
    answer = receive_frame_before(fd_, options_.max_frame_bytes + 64, deadline);
  } catch (const SocketFailure& failure) {
    ::close(fd_);
    fd_ = -1;
    if (failure.kind == SocketFailure::Kind::kTimeout) {
      broken_ = std::string("an earlier ") + op + " timed out";
      throw TimeoutError(RUNRUN_WHERE, where + ": the server did not answer within " +
                                           seconds_text(options_.request_timeout + extra_time) +
                                           "; is the launcher's host overloaded or unreachable?");
    }
    broken_ = "the connection was lost (" + failure.what + ")";
    throw PeerFailureError(RUNRUN_WHERE,
                           where + ": " + broken_ + "; the runrun launcher has probably exited");
  }
  if (type_of(answer) == MessageType::kRefused) {
    const std::string text = decoded(answer, where, [](PayloadReader& reader) {
      reader.u8();
      return reader.string();
    });
    broken_ = "the server closed the connection after refusing: " + text;
    throw InvalidArgumentError(RUNRUN_WHERE, where + ": " + broken_);
  }
  if (type_of(answer) == MessageType::kError) {
    ErrorKind kind{};
    const std::string text = decoded(answer, where, [&kind](PayloadReader& reader) {
      kind = static_cast<ErrorKind>(reader.u8());
      return reader.string();
    });
    if (kind == ErrorKind::kSuperseded) {  // handled as a timeout: join the newer generation
      throw TimeoutError(RUNRUN_WHERE, where + ": " + text);
    }
    if (kind == ErrorKind::kTimeout) {
      throw TimeoutError(RUNRUN_WHERE,
                         where + " timed out after " + seconds_text(extra_time) + ": " + text +
                             "; the ranks that should set them have not (started, or failed: "
                             "see their output)");
    }
    throw InvalidArgumentError(RUNRUN_WHERE, where + " failed: " + text);
  }
  if (type_of(answer) != expected && type_of(answer) != MessageType::kNotFound) {
    throw PeerFailureError(RUNRUN_WHERE, where + ": unexpected answer type " +
                                             std::to_string(static_cast<int>(type_of(answer))));
  }
  return answer;
}

void RendezvousClient::set(uint64_t generation, const std::string& key, const std::string& value) {
  PayloadWriter writer;
  writer.string(value);
  std::lock_guard lock(mutex_);
  round_trip(with_key(MessageType::kSet, generation, key) + writer.bytes(), "set",
             MessageType::kOk);
}

std::optional<std::string> RendezvousClient::get(uint64_t generation, const std::string& key) {
  std::lock_guard lock(mutex_);
  const std::string answer =
      round_trip(with_key(MessageType::kGet, generation, key), "get", MessageType::kValue);
  if (type_of(answer) == MessageType::kNotFound) return std::optional<std::string>();
  return decoded(answer, server_address(),
                 [](PayloadReader& reader) { return std::optional(reader.string()); });
}

void RendezvousClient::wait(uint64_t generation, const std::vector<std::string>& keys,
                            milliseconds timeout) {
  PayloadWriter writer;
  writer.u64(static_cast<uint64_t>(std::max<int64_t>(timeout.count(), 0)));
  std::lock_guard lock(mutex_);
  round_trip(request(MessageType::kWait, generation) + writer.bytes() + keys_field(keys), "wait",
             MessageType::kOk, timeout);
}

int64_t RendezvousClient::add(uint64_t generation, const std::string& key, int64_t delta) {
  PayloadWriter writer;
  writer.i64(delta);
  std::lock_guard lock(mutex_);
  const std::string answer = round_trip(
      with_key(MessageType::kAdd, generation, key) + writer.bytes(), "add", MessageType::kCounter);
  return decoded(answer, server_address(), [](PayloadReader& reader) { return reader.i64(); });
}

bool RendezvousClient::check(uint64_t generation, const std::vector<std::string>& keys) {
  std::lock_guard lock(mutex_);
  const std::string answer = round_trip(request(MessageType::kCheck, generation) + keys_field(keys),
                                        "check", MessageType::kBool);
  return decoded(answer, server_address(), [](PayloadReader& reader) { return reader.u8() != 0; });
}

bool RendezvousClient::remove(uint64_t generation, const std::string& key) {
  std::lock_guard lock(mutex_);
  const std::string answer =
      round_trip(with_key(MessageType::kDelete, generation, key), "delete", MessageType::kBool);
  return decoded(answer, server_address(), [](PayloadReader& reader) { return reader.u8() != 0; });
}

void RendezvousClient::drop_generations_before(uint64_t generation) {
  std::lock_guard lock(mutex_);
  round_trip(request(MessageType::kDropBefore, generation), "drop generations", MessageType::kOk);
}

}  // namespace runrun::rendezvous
