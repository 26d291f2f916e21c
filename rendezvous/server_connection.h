#pragma once
// Why: one client of the rendezvous server: its non-blocking socket, its buffers and where it is
// in the protocol (authenticating, serving, waiting for keys, closing). The server loop polls
// the events it asks for and calls it back; the connection never blocks.
//
// Bounds: a frame above the limit is refused (and the connection closed) before its payload is
// read; no more input is read while an answer is still queued or a wait is parked, so a client
// that does not read its answers cannot make the server buffer more than one of them. A client
// that does not authenticate in time is dropped.
// Thread-safety: none; owned by the server thread.

#include <optional>
#include <string>

#include "rendezvous/job_secret.h"
#include "rendezvous/key_value_store.h"
#include "rendezvous/request_handler.h"

namespace runrun::rendezvous {

struct ConnectionLimits {
  size_t max_frame_bytes;
  std::chrono::milliseconds auth_timeout;
};

class ServerConnection {
 public:
  // Takes ownership of `fd` (non-blocking) and queues the Hello with a fresh nonce.
  ServerConnection(int fd, std::string peer, const JobSecret& secret, ConnectionLimits limits,
                   Clock::time_point now);
  ~ServerConnection();
  ServerConnection(const ServerConnection&) = delete;
  ServerConnection& operator=(const ServerConnection&) = delete;

  int fd() const { return fd_; }
  const std::string& peer() const { return peer_; }
  short poll_events() const;

  // Reacts to poll's `revents`: reads and handles requests, writes queued answers. Sets
  // `store_changed` when a request changed the store.
  void on_events(short revents, KeyValueStore& store, Clock::time_point now, bool* store_changed);
  // Answers a parked wait when it can be answered; handles input queued behind it.
  void recheck_wait(KeyValueStore& store, Clock::time_point now, bool* store_changed);
  // The next moment the server loop must call `on_deadline` (auth timeout, wait deadline,
  // closing linger); nullopt when none.
  std::optional<Clock::time_point> deadline() const;
  void on_deadline(KeyValueStore& store, Clock::time_point now, bool* store_changed);

  bool finished() const { return state_ == State::kFinished; }
  // A refusal of this connection's authentication, for the server's log; empty when none.
  const std::string& refusal() const { return refusal_; }

 private:
  enum class State { kAuthenticating, kServing, kWaiting, kClosing, kFinished };

  void read_input();
  void write_output();
  void handle_frames(KeyValueStore& store, Clock::time_point now, bool* store_changed);
  void handle_auth(std::string_view payload);
  void refuse(uint8_t reason, const std::string& text, Clock::time_point now);
  void queue(std::string_view payload);

  int fd_;
  std::string peer_;
  const JobSecret& secret_;
  ConnectionLimits limits_;
  State state_ = State::kAuthenticating;
  std::string nonce_;
  std::string input_;
  std::string output_;
  size_t output_sent_ = 0;
  std::optional<ParkedWait> wait_;
  Clock::time_point deadline_;
  std::string refusal_;
  bool peer_closed_ = false;
};

}  // namespace runrun::rendezvous
