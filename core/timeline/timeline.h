#pragma once
// Why: RUNRUN_TIMELINE / runrun_start_timeline write a Chrome-trace JSON ("JSON Array Format")
// of what every tensor went through on this rank — negotiation (and which ranks were late),
// queueing, fusion copies, the collective — so a user can see in chrome://tracing or Perfetto
// where a step's time goes. The layout is Horovod's: each row is a trace "process" (its own
// pid, named by process_name metadata), pid 0 names the rank; core/timeline/timeline_names.h gives
// the
// row and span names. See docs/timeline.md.
//
// Threading: any thread may call any method. Events from several process-set worker threads
// interleave safely (one short critical section per event: format into a memory buffer); a
// small writer thread per running file does all file I/O, so an event never waits for the disk,
// and it wakes as soon as an event waits, so the file follows the job within milliseconds.
// start/stop may race with events: an event lands in the file that is running when it takes the
// lock, or is ignored when none is. When the disk is slower than the events, the buffer grows up
// to a memory cap; beyond it events are dropped, counted, warned about once and noted in the
// trace. The file is always closed as valid JSON by stop() and the destructor; every span still
// open at that point is ended there, so B/E events of each row balance in every file.
// Rows are bounded too (RowLimits): a row with nothing open and unused for a while is forgotten;
// its name gets a new row (and its metadata again) if it comes back.

#include <atomic>
#include <chrono>
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

// How many rows (distinct names) a Timeline remembers. Over `cap`, rows with nothing open that
// were unused for `idle` are forgotten; if that is not enough, the least recently used of the
// rows with nothing open, down to half the cap. A model's own tensors recur every step and stay.
struct TimelineRowLimits {
  size_t cap = 65536;
  std::chrono::milliseconds idle{60'000};
};

class Timeline {
 public:
  using Args = std::vector<std::pair<std::string, std::string>>;
  // Most bytes of formatted events waiting for the disk before events are dropped.
  static constexpr size_t kDefaultMemoryCapBytes = size_t{64} << 20;
  using RowLimits = TimelineRowLimits;

  Timeline() = default;  // inactive; warnings go to spdlog's default logger
  // `logger` gets the warnings (dropped events, write errors); `memory_cap_bytes` as above.
  explicit Timeline(Logger logger, size_t memory_cap_bytes = kDefaultMemoryCapBytes,
                    RowLimits rows = RowLimits{});
  ~Timeline();  // stop()
  Timeline(const Timeline&) = delete;
  Timeline& operator=(const Timeline&) = delete;

  // Starts writing a Chrome-trace JSON (array format) to `path` for process `rank`. Replaces a
  // running timeline (closing the old file properly first). Throws InvalidArgumentError naming
  // the path and the OS error when the file cannot be opened; no timeline runs then.
  // `mark_cycles`: mark() calls are written (Horovod's HOROVOD_TIMELINE_MARK_CYCLES).
  void start(const std::string& path, int rank, bool mark_cycles = false);
  // Closes the file as valid JSON (open spans ended, the array closed). No-op when inactive.
  // Idempotent. Blocks until the file is written and closed.
  void stop();
  // Cheap (one relaxed atomic load): callers skip building arguments when false.
  bool active() const { return active_.load(std::memory_order_relaxed); }
  // Whether the running file wants cycle marks (one relaxed load).
  bool marking_cycles() const { return mark_cycles_.load(std::memory_order_relaxed); }

  // A span of `phase` (e.g. "NEGOTIATE_ALLREDUCE", "ALLREDUCE", "QUEUE", "GLOO_ALLREDUCE") on the
  // row named `tensor` (core/timeline/timeline_names.h). Spans of one row nest/sequence.
  // `args` are extra key/value strings shown in the trace viewer (e.g. {"late_ranks", "1, 3"}).
  void begin(const std::string& tensor, std::string_view phase, const Args& args = {});
  // Ends the innermost open span of `phase` on the tensor's row (and any opened inside it). An
  // end without a matching begin (the timeline started mid-span) is ignored.
  void end(const std::string& tensor, std::string_view phase);
  // A point event on the tensor's row.
  void instant(const std::string& tensor, std::string_view what, const Args& args = {});
  // A global mark across every row (Horovod's CYCLE_START with HOROVOD_TIMELINE_MARK_CYCLES).
  void mark(std::string_view what);

  // Rows remembered now (tests: the bound under name churn).
  size_t row_count() const;

  // Events dropped over the memory cap since the running (or last) file started.
  uint64_t dropped_events() const { return dropped_.load(std::memory_order_relaxed); }

 private:
  struct Session;          // one open file and its writer thread (timeline.cc)
  struct SessionDeleter {  // out of line, so `Timeline() = default` compiles without Session
    void operator()(Session* session) const;
  };
  using SessionPtr = std::unique_ptr<Session, SessionDeleter>;
  // Per row name: its pid in the trace (stable while the row is remembered) and its open spans.
  struct Row {
    int pid = 0;
    bool named = false;             // process_name written to the running file
    std::vector<std::string> open;  // open span phases, innermost last (slots reused)
    size_t depth = 0;               // open.size() in use
    int64_t last_used_ns = 0;       // on the running session's clock
  };

  void stop_locked();  // requires control_mutex_
  // The following require mutex_ and a running session.
  Row& row_locked(const std::string& tensor, int64_t now_ns);
  void forget_rows_locked(int64_t now_ns);  // the RowLimits sweep
  // Appends the row's thread_name metadata unless the running file has it; true if appended.
  bool append_row_name_locked(const std::string& tensor, const Row& row);
  void append_event_locked(char ph, const Row& row, std::string_view name, const Args& args,
                           int64_t ts_ns);
  bool reserve_locked(size_t incoming_bytes);

  Logger logger_;
  size_t memory_cap_bytes_ = kDefaultMemoryCapBytes;
  RowLimits row_limits_;
  std::atomic<bool> active_{false};
  std::atomic<bool> mark_cycles_{false};
  std::atomic<uint64_t> dropped_{0};
  std::mutex control_mutex_;  // serialises start/stop
  mutable std::mutex mutex_;  // guards everything below and the session's buffers
  SessionPtr session_;
  std::unordered_map<std::string, Row> rows_;
  int next_pid_ = 1;           // pid 0 is the rank's own metadata row
  int64_t next_sweep_ns_ = 0;  // no sweep before this (a sweep that freed nothing waits)
};

// Appends `text` to `out` as the inside of a JSON string: quotes, backslashes and control
// characters escaped; other bytes (UTF-8) copied. Exposed for tests.
void append_json_escaped(std::string& out, std::string_view text);

}  // namespace runrun
