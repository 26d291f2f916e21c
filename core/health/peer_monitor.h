#pragma once
// Why: a dead or hung peer must become an error on every rank in bounded time, never a hang.
// MPI cannot tell us (a collective with a dead peer just waits), so every rank keeps one TCP
// connection to every other rank, beside the data transport. A process that dies closes its
// sockets (peers see it at once); one that stops answering (stopped, frozen host, cut network)
// stops sending the heartbeat byte sent every `interval` (peers see it after `timeout`). A
// clean shutdown says goodbye first, so it is never mistaken for a loss. The heartbeat byte also
// says whether this rank is waiting in negotiation, so a rank stuck waiting can tell which
// peers have enqueued nothing at all (the stall inspector's view of idle ranks), and whether this
// rank's runtime failed (alive, but running no more collectives: peers must not wait for it).
// Threading contract: construct and start() on one thread (a collective step of init: every
// rank must start); afterwards the monitor's own thread does everything and calls `on_lost`
// at most once, from that thread. stop() may be called from any thread; the destructor stops.

#include <poll.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/logging.h"

namespace runrun {

// How a peer was lost: its connection closed or failed (the process is gone), or it went silent
// (no heartbeat for the timeout: the process is stopped or hung, or its host or network failed).
enum class PeerLoss { kClosed, kSilent };

class PeerMonitor {
 public:
  using OnLost = std::function<void(int rank, PeerLoss how, const std::string& why)>;

  // `loopback_only`: every rank of the job is on this host, so the listening port is bound to
  // 127.0.0.1 and only that is advertised (nothing listens on other interfaces for a local job);
  // otherwise it listens on every interface and advertises each IPv4 address, loopback last.
  PeerMonitor(int rank, int size, std::chrono::milliseconds interval,
              std::chrono::milliseconds timeout, Logger logger, bool loopback_only = false);
  ~PeerMonitor();
  PeerMonitor(const PeerMonitor&) = delete;
  PeerMonitor& operator=(const PeerMonitor&) = delete;

  // "host|ip1,ip2,...|port": where peers reach this rank. Valid from construction.
  const std::string& address() const { return address_; }

  // Connects to every peer (addresses indexed by rank, `job_key` equal on every rank so that
  // a connection to a stranger's port is refused), then starts the monitor thread. Throws
  // PeerFailureError naming the rank that could not be reached within `connect_timeout`.
  void start(const std::vector<std::string>& addresses, uint64_t job_key, OnLost on_lost,
             std::chrono::milliseconds connect_timeout = std::chrono::seconds(60));

  // What the heartbeat reports (called on the monitor thread each beat), and a hook run on the
  // monitor thread after each beat. Set before start().
  void set_waiting_probe(std::function<bool()> is_waiting) { is_waiting_ = std::move(is_waiting); }
  void set_tick(std::function<void()> tick) { tick_ = std::move(tick); }
  // Called (monitor thread) when a peer says goodbye: it shut its runtime down.
  void set_on_left(std::function<void(int rank)> on_left) { on_left_ = std::move(on_left); }
  // While `is_failed` (called on the monitor thread each beat) is true, the heartbeat says this
  // rank's runtime failed (it is alive but runs no more collectives); `on_failed` is called
  // (monitor thread) the first time a peer's heartbeat says so. Set before start().
  void set_failed_probe(std::function<bool()> is_failed) { is_failed_ = std::move(is_failed); }
  void set_on_failed(std::function<void(int rank)> on_failed) { on_failed_ = std::move(on_failed); }
  // Peers whose last heartbeat said they are not waiting in negotiation. Any thread.
  std::vector<int> idle_peers() const;

  // Says goodbye to every peer and joins the thread. Idempotent.
  void stop();

  // For tests: stop sending heartbeats (as a frozen process would) without closing anything.
  void freeze_for_test() { frozen_ = true; }
  // For tests: close every connection without goodbye, as a killed process would.
  void crash_for_test();

 private:
  void connect_to_lower_ranks(const std::vector<std::string>& addresses, uint64_t job_key,
                              std::chrono::steady_clock::time_point deadline);
  void accept_higher_ranks(uint64_t job_key, std::chrono::steady_clock::time_point deadline);
  using Clock = std::chrono::steady_clock;
  // What the monitor's thread knows of its peers (run()'s state, on that thread only).
  struct Watch {
    Watch(size_t size, Clock::time_point now);
    std::vector<Clock::time_point> last_heard;
    std::vector<bool> gone;
    std::vector<bool> failed;  // its heartbeat said so
    Clock::time_point next_beat;
    Clock::time_point last_pass;
    std::vector<pollfd> fds;
  };
  void run();
  void send_heartbeats(const Watch& watch);
  // Loses each peer not heard from within the timeout.
  void judge_silence(Watch& watch, Clock::time_point now);
  // Waits (until the next beat) for what the peers send, and reads it.
  void poll_peers(Watch& watch);
  void read_peer(Watch& watch, int rank, int fd);
  void lose(int rank, PeerLoss how, const std::string& why);

  int rank_;
  int size_;
  std::chrono::milliseconds interval_;
  std::chrono::milliseconds timeout_;
  Logger logger_;
  std::string address_;
  int listen_fd_ = -1;
  int wake_pipe_[2] = {-1, -1};
  std::vector<int> peer_fds_;  // by rank; -1 for self
  std::vector<std::string> peer_hosts_;
  OnLost on_lost_;
  std::function<bool()> is_waiting_;
  std::function<void()> tick_;
  std::function<void(int)> on_left_;
  std::function<bool()> is_failed_;
  std::function<void(int)> on_failed_;
  mutable std::mutex state_mutex_;
  std::vector<char> peer_state_;  // last heartbeat byte of each peer
  std::atomic<bool> stopping_{false};
  std::atomic<bool> frozen_{false};
  bool lost_reported_ = false;
  std::thread thread_;
};

}  // namespace runrun
