#pragma once
// Why: RUNRUN_TIMELINE / runrun_start_timeline write a Chrome-trace JSON ("JSON Array Format")
// of what every tensor went through on this rank — negotiation (and which ranks were late),
// queueing, fusion copies, the collective — so a user can see in chrome://tracing or Perfetto
// where a step's time goes. See docs/timeline.md.
//
// Threading: any thread may call any method. Events from several process-set worker threads
// interleave safely (one short critical section per event: format into a memory buffer); a
// small writer thread per running file does all file I/O, so an event never waits for the disk.
// start/stop may race with events: an event lands in the file that is running when it takes the
// lock, or is ignored when none is. When the disk is slower than the events, the buffer grows up
// to a memory cap; beyond it events are dropped, counted, warned about once and noted in the
// trace. The file is always closed as valid JSON by stop() and the destructor; every span still
// open at that point is ended there, so B/E events of each row balance in every file.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/logging.h"

namespace runrun {

class Timeline {
 public:
  using Args = std::vector<std::pair<std::string, std::string>>;
  // Most bytes of formatted events waiting for the disk before events are dropped.
  static constexpr size_t kDefaultMemoryCapBytes = size_t{64} << 20;

  Timeline() = default;  // inactive; warnings go to spdlog's default logger
  // `logger` gets the warnings (dropped events, write errors); `memory_cap_bytes` as above.
  explicit Timeline(Logger logger, size_t memory_cap_bytes = kDefaultMemoryCapBytes);
  ~Timeline();  // stop()
  Timeline(const Timeline&) = delete;
  Timeline& operator=(const Timeline&) = delete;

  // Starts writing a Chrome-trace JSON (array format) to `path` for process `rank`. Replaces a
  // running timeline (closing the old file properly first). Throws InvalidArgumentError naming
  // the path and the OS error when the file cannot be opened; no timeline runs then.
  void start(const std::string& path, int rank);
  // Closes the file as valid JSON (open spans ended, the array closed). No-op when inactive.
  // Idempotent. Blocks until the file is written and closed.
  void stop();
  // Cheap (one relaxed atomic load): callers skip building arguments when false.
  bool active() const { return active_.load(std::memory_order_relaxed); }

  // A span of `phase` (e.g. "NEGOTIATE", "QUEUE", "MEMCPY_IN_FUSION_BUFFER", "ALLREDUCE",
  // "MEMCPY_OUT_FUSION_BUFFER") on the row of `tensor`. Spans of one tensor nest/sequence.
  // `args` are extra key/value strings shown in the trace viewer (e.g. {"late_ranks", "1, 3"}).
  void begin(const std::string& tensor, std::string_view phase, const Args& args = {});
  // Ends the innermost open span of `phase` on the tensor's row (and any opened inside it). An
  // end without a matching begin (the timeline started mid-span) is ignored.
  void end(const std::string& tensor, std::string_view phase);
  // A point event on the tensor's row.
  void instant(const std::string& tensor, std::string_view what, const Args& args = {});

  // Events dropped over the memory cap since the running (or last) file started.
  uint64_t dropped_events() const { return dropped_.load(std::memory_order_relaxed); }

 private:
  struct Session;  // one open file and its writer thread (timeline.cc)
  struct SessionDeleter {  // out of line, so `Timeline() = default` compiles without Session
    void operator()(Session* session) const;
  };
  using SessionPtr = std::unique_ptr<Session, SessionDeleter>;
  // Per tensor name: its row (tid, stable for the Timeline's life) and its open spans.
  struct Row {
    int tid = 0;
    bool named = false;                // thread_name written to the running file
    std::vector<std::string> open;     // open span phases, innermost last (slots reused)
    size_t depth = 0;                  // open.size() in use
  };

  void stop_locked();  // requires control_mutex_
  // The following require mutex_ and a running session.
  Row& row_locked(const std::string& tensor);
  // Appends the row's thread_name metadata unless the running file has it; true if appended.
  bool append_row_name_locked(const std::string& tensor, const Row& row);
  void append_event_locked(char ph, const Row& row, std::string_view name, const Args& args,
                           int64_t ts_ns);
  bool reserve_locked(size_t incoming_bytes);

  Logger logger_;
  size_t memory_cap_bytes_ = kDefaultMemoryCapBytes;
  std::atomic<bool> active_{false};
  std::atomic<uint64_t> dropped_{0};
  std::mutex control_mutex_;  // serialises start/stop
  std::mutex mutex_;          // guards everything below and the session's buffers
  SessionPtr session_;
  std::unordered_map<std::string, Row> rows_;
};

// Appends `text` to `out` as the inside of a JSON string: quotes, backslashes and control
// characters escaped; other bytes (UTF-8) copied. Exposed for tests.
void append_json_escaped(std::string& out, std::string_view text);

}  // namespace runrun
