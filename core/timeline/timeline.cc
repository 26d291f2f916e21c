#include "core/timeline/timeline.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <thread>

#include "common/errors.h"

namespace runrun {
namespace {

using Clock = std::chrono::steady_clock;

void append_int(std::string& out, int64_t value) {
  char digits[24];
  auto result = std::to_chars(digits, digits + sizeof(digits), value);
  out.append(digits, result.ptr);
}

// Microseconds with nanosecond precision: "1234.567".
void append_micros(std::string& out, int64_t ns) {
  append_int(out, ns / 1000);
  int frac = static_cast<int>(ns % 1000);
  char tail[4] = {'.', static_cast<char>('0' + frac / 100), static_cast<char>('0' + frac / 10 % 10),
                  static_cast<char>('0' + frac % 10)};
  out.append(tail, 4);
}

void append_string(std::string& out, std::string_view text) {
  out.push_back('"');
  append_json_escaped(out, text);
  out.push_back('"');
}

// Length of the valid UTF-8 sequence starting at text[i], or 0 when it is not valid.
size_t utf8_sequence_length(std::string_view text, size_t i) {
  auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  unsigned char lead = byte(i);
  size_t length = lead >= 0xF0 && lead <= 0xF4 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC2 ? 2 : 0;
  if (length == 0 || lead > 0xF4 || i + length > text.size()) return 0;
  for (size_t k = 1; k < length; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
  }
  unsigned char second = byte(i + 1);
  if (lead == 0xE0 && second < 0xA0) return 0;  // overlong
  if (lead == 0xED && second > 0x9F) return 0;  // surrogate
  if (lead == 0xF0 && second < 0x90) return 0;  // overlong
  if (lead == 0xF4 && second > 0x8F) return 0;  // beyond U+10FFFF
  return length;
}

bool needs_escape(unsigned char c) { return c < 0x20 || c == '"' || c == '\\' || c >= 0x80; }

}  // namespace

void append_json_escaped(std::string& out, std::string_view text) {
  size_t i = 0;
  while (i < text.size()) {
    size_t plain = i;
    while (plain < text.size() && !needs_escape(static_cast<unsigned char>(text[plain]))) ++plain;
    out.append(text.data() + i, plain - i);
    i = plain;
    if (i == text.size()) break;
    auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x80) {
      size_t length = utf8_sequence_length(text, i);
      if (length == 0) {
        out.append("\\ufffd");  // not UTF-8: a replacement character keeps the file valid
        ++i;
      } else {
        out.append(text.data() + i, length);
        i += length;
      }
      continue;
    }
    switch (c) {
      case '"':
        out.append("\\\"");
        break;
      case '\\':
        out.append("\\\\");
        break;
      case '\n':
        out.append("\\n");
        break;
      case '\r':
        out.append("\\r");
        break;
      case '\t':
        out.append("\\t");
        break;
      case '\b':
        out.append("\\b");
        break;
      case '\f':
        out.append("\\f");
        break;
      default: {
        static constexpr char kHex[] = "0123456789abcdef";
        char escaped[6] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 0xF]};
        out.append(escaped, 6);
      }
    }
    ++i;
  }
}

// One open file. `pending` and the flags are guarded by the Timeline's mutex_; the file itself
// belongs to the writer thread until it has been joined, then to stop().
struct Timeline::Session {
  Session(std::FILE* file_in, std::string path_in, int rank_in, spdlog::logger& log_in)
      : file(file_in), path(std::move(path_in)), rank(rank_in), log(log_in) {}
  ~Session() {
    if (writer.joinable()) writer.join();
    if (file != nullptr) std::fclose(file);
  }

  int64_t now_ns() const {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t0).count();
  }
  void run(std::mutex& mutex);  // the writer thread's loop
  void write(const std::string& chunk);

  std::FILE* file;
  std::string path;
  int rank;
  spdlog::logger& log;
  Clock::time_point t0 = Clock::now();
  std::string pending;   // formatted events the writer has not taken yet
  size_t in_flight = 0;  // bytes the writer is writing right now
  bool closing = false;  // stop(): write what is pending, then return
  bool warned_drop = false;
  bool write_failed = false;  // touched by the writer thread only
  std::condition_variable wake;
  std::thread writer;
};

void Timeline::Session::run(std::mutex& mutex) {
  std::string chunk;
  std::unique_lock lock(mutex);
  for (;;) {
    // Events are written as soon as they wait (Horovod writes each record as it is dequeued):
    // one wake per batch, since appending to a non-empty buffer does not notify.
    wake.wait(lock, [&] { return closing || !pending.empty(); });
    bool last = closing;
    chunk.swap(pending);  // pending keeps the capacity of the previous chunk
    in_flight = chunk.size();
    lock.unlock();
    if (!chunk.empty()) write(chunk);
    chunk.clear();
    lock.lock();
    in_flight = 0;
    if (last) return;
  }
}

void Timeline::Session::write(const std::string& chunk) {
  if (write_failed) return;  // discard: keeping it would only grow memory
  if (std::fwrite(chunk.data(), 1, chunk.size(), file) == chunk.size() && std::fflush(file) == 0) {
    return;
  }
  write_failed = true;
  log.warn(
      "timeline {}: writing failed ({}); the rest of this timeline is discarded. Check the "
      "free space and permissions of that file system.",
      path, std::strerror(errno));
}

void Timeline::SessionDeleter::operator()(Session* session) const { delete session; }

Timeline::Timeline(Logger logger, size_t memory_cap_bytes, RowLimits rows)
    : logger_(std::move(logger)), memory_cap_bytes_(memory_cap_bytes), row_limits_(rows) {}

Timeline::~Timeline() { stop(); }

void Timeline::start(const std::string& path, int rank, bool mark_cycles) {
  std::lock_guard control(control_mutex_);
  stop_locked();
  std::FILE* file = std::fopen(path.c_str(), "w");
  if (file == nullptr) {
    int error = errno;
    throw InvalidArgumentError(
        RUNRUN_WHERE, "cannot open the timeline file '" + path +
                          "' for writing: " + std::strerror(error) +
                          "; give a path in an existing, writable directory (RUNRUN_TIMELINE or "
                          "runrun_start_timeline)");
  }
  spdlog::logger& log = logger_ ? *logger_ : *spdlog::default_logger_raw();
  SessionPtr session(new Session(file, path, rank, log));
  // pid 0 is the rank itself, as in Horovod's files (which carry the start time there).
  const auto since_epoch = std::chrono::duration_cast<std::chrono::microseconds>(
      std::chrono::system_clock::now().time_since_epoch());
  std::string& header = session->pending;
  header.append("[\n{\"ph\":\"M\",\"pid\":0,\"name\":\"process_name\",\"args\":{\"name\":\"rank ");
  append_int(header, rank);
  header.append("\",\"start_time_since_epoch_in_micros\":");
  append_int(header, since_epoch.count());
  header.append("}},\n{\"ph\":\"M\",\"pid\":0,\"name\":\"process_sort_index\",");
  header.append("\"args\":{\"sort_index\":0}}");
  Session* raw = session.get();
  session->writer = std::thread([this, raw] { raw->run(mutex_); });
  std::lock_guard lock(mutex_);
  session_ = std::move(session);
  dropped_.store(0, std::memory_order_relaxed);
  next_sweep_ns_ = 0;
  for (auto& [name, row] : rows_) {
    row.named = false;
    row.last_used_ns = 0;  // the new session's clock starts at 0
  }
  mark_cycles_.store(mark_cycles, std::memory_order_relaxed);
  active_.store(true, std::memory_order_release);
}

void Timeline::stop() {
  std::lock_guard control(control_mutex_);
  stop_locked();
}

void Timeline::stop_locked() {
  SessionPtr session;
  {
    std::lock_guard lock(mutex_);
    if (!session_) return;
    active_.store(false, std::memory_order_relaxed);
    mark_cycles_.store(false, std::memory_order_relaxed);
    int64_t ts = session_->now_ns();
    for (auto& [name, row] : rows_) {  // end what is still open so every row balances
      while (row.depth > 0) {
        --row.depth;
        append_event_locked('E', row, row.open[row.depth], {}, ts);
      }
    }
    uint64_t dropped = dropped_.load(std::memory_order_relaxed);
    if (dropped > 0) {
      std::string& out = session_->pending;
      out.append(",\n{\"ph\":\"i\",\"s\":\"p\",\"pid\":0,\"tid\":0,\"ts\":");
      append_micros(out, ts);
      out.append(",\"name\":\"timeline events dropped (memory cap)\",\"args\":{\"count\":\"");
      append_int(out, static_cast<int64_t>(dropped));
      out.append("\"}}");
    }
    session = std::move(session_);
    session->closing = true;
  }
  session->wake.notify_one();
  session->writer.join();
  bool closed = !session->write_failed && std::fputs("\n]\n", session->file) >= 0;
  closed = std::fclose(session->file) == 0 && closed;
  session->file = nullptr;
  if (!closed && !session->write_failed) {
    session->log.warn("timeline {}: closing the file failed ({}); it may be incomplete.",
                      session->path, std::strerror(errno));
  }
  if (uint64_t dropped = dropped_.load(std::memory_order_relaxed); dropped > 0) {
    session->log.warn("timeline {}: {} events were dropped over the memory cap of {} bytes.",
                      session->path, dropped, memory_cap_bytes_);
  }
}

Timeline::Row& Timeline::row_locked(const std::string& tensor, int64_t now_ns) {
  auto it = rows_.find(tensor);
  if (it == rows_.end()) {
    if (rows_.size() >= row_limits_.cap && now_ns >= next_sweep_ns_) forget_rows_locked(now_ns);
    it = rows_.try_emplace(tensor).first;
    it->second.pid = next_pid_++;
  }
  it->second.last_used_ns = now_ns;
  return it->second;
}

// Rows with nothing open: first those idle for longer than the limit, then, while still over
// the cap, the least recently used, down to half the cap. Open spans are never forgotten (stop
// must end them). A sweep that frees nothing is not retried for half the idle time.
void Timeline::forget_rows_locked(int64_t now_ns) {
  const int64_t idle_ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(row_limits_.idle).count();
  std::vector<std::pair<int64_t, const std::string*>> idle_rows;
  for (auto it = rows_.begin(); it != rows_.end();) {
    const Row& row = it->second;
    if (row.depth == 0 && now_ns - row.last_used_ns > idle_ns) {
      it = rows_.erase(it);
      continue;
    }
    if (row.depth == 0) idle_rows.emplace_back(row.last_used_ns, &it->first);
    ++it;
  }
  if (rows_.size() >= row_limits_.cap) {
    size_t excess = rows_.size() - std::min(rows_.size(), row_limits_.cap / 2);
    excess = std::min(excess, idle_rows.size());
    std::nth_element(idle_rows.begin(), idle_rows.begin() + static_cast<std::ptrdiff_t>(excess),
                     idle_rows.end());
    std::vector<std::string> oldest;
    for (size_t i = 0; i < excess; ++i) oldest.push_back(*idle_rows[i].second);
    for (const std::string& name : oldest) rows_.erase(name);
  }
  if (rows_.size() >= row_limits_.cap) next_sweep_ns_ = now_ns + idle_ns / 2;
}

size_t Timeline::row_count() const {
  std::lock_guard lock(mutex_);
  return rows_.size();
}

void Timeline::append_event_locked(char ph, const Row& row, std::string_view name, const Args& args,
                                   int64_t ts_ns) {
  std::string& out = session_->pending;
  out.append(",\n{\"ph\":\"");
  out.push_back(ph);
  out.append(ph == 'i' ? "\",\"s\":\"t\",\"pid\":" : "\",\"pid\":");
  append_int(out, row.pid);
  out.append(",\"tid\":0,\"ts\":");
  append_micros(out, ts_ns);
  out.append(",\"name\":");
  append_string(out, name);
  if (!args.empty()) {
    out.append(",\"args\":{");
    for (size_t i = 0; i < args.size(); ++i) {
      if (i > 0) out.push_back(',');
      append_string(out, args[i].first);
      out.push_back(':');
      append_string(out, args[i].second);
    }
    out.push_back('}');
  }
  out.push_back('}');
}

// Called after appending `incoming_bytes`: keeps them when under the cap, else takes them back
// and counts a drop. Wakes the writer when a flush's worth is waiting.
bool Timeline::reserve_locked(size_t incoming_bytes) {
  Session& s = *session_;
  if (s.pending.size() + s.in_flight > memory_cap_bytes_) {
    s.pending.resize(s.pending.size() - incoming_bytes);
    dropped_.fetch_add(1, std::memory_order_relaxed);
    if (!s.warned_drop) {
      s.warned_drop = true;
      s.log.warn(
          "timeline {}: the disk is slower than the events; over the memory cap of {} "
          "bytes events are dropped (counted, noted at the end of the trace). See "
          "docs/timeline.md.",
          s.path, memory_cap_bytes_);
    }
    return false;
  }
  if (s.pending.size() == incoming_bytes) s.wake.notify_one();  // was empty: the writer waits
  return true;
}

bool Timeline::append_row_name_locked(const std::string& tensor, const Row& row) {
  if (row.named) return false;
  std::string& out = session_->pending;
  out.append(",\n{\"ph\":\"M\",\"pid\":");
  append_int(out, row.pid);
  out.append(",\"name\":\"process_name\",\"args\":{\"name\":");
  append_string(out, tensor);
  out.append("}},\n{\"ph\":\"M\",\"pid\":");
  append_int(out, row.pid);
  out.append(",\"name\":\"process_sort_index\",\"args\":{\"sort_index\":");
  append_int(out, row.pid);
  out.append("}}");
  return true;
}

void Timeline::begin(const std::string& tensor, std::string_view phase, const Args& args) {
  if (!active()) return;
  std::lock_guard lock(mutex_);
  if (!session_) return;
  const int64_t now = session_->now_ns();
  Row& row = row_locked(tensor, now);
  size_t mark = session_->pending.size();
  bool naming = append_row_name_locked(tensor, row);
  append_event_locked('B', row, phase, args, now);
  if (!reserve_locked(session_->pending.size() - mark)) return;
  if (naming) row.named = true;
  if (row.depth == row.open.size()) row.open.emplace_back();
  row.open[row.depth++].assign(phase);
}

void Timeline::end(const std::string& tensor, std::string_view phase) {
  if (!active()) return;
  std::lock_guard lock(mutex_);
  if (!session_) return;
  auto it = rows_.find(tensor);
  if (it == rows_.end()) return;
  Row& row = it->second;
  size_t match = row.depth;  // 1-based position of the innermost open `phase`; 0: none
  while (match > 0 && row.open[match - 1] != phase) --match;
  if (match == 0) return;  // begun before this file started, or never
  int64_t ts = session_->now_ns();
  row.last_used_ns = ts;
  size_t mark = session_->pending.size();
  for (size_t d = row.depth; d >= match; --d) {
    append_event_locked('E', row, row.open[d - 1], {}, ts);
  }
  if (!reserve_locked(session_->pending.size() - mark)) return;  // stays open: stop() ends it
  row.depth = match - 1;
}

void Timeline::instant(const std::string& tensor, std::string_view what, const Args& args) {
  if (!active()) return;
  std::lock_guard lock(mutex_);
  if (!session_) return;
  const int64_t now = session_->now_ns();
  Row& row = row_locked(tensor, now);
  size_t mark = session_->pending.size();
  bool naming = append_row_name_locked(tensor, row);
  append_event_locked('i', row, what, args, now);
  if (reserve_locked(session_->pending.size() - mark) && naming) row.named = true;
}

void Timeline::mark(std::string_view what) {
  if (!marking_cycles()) return;
  std::lock_guard lock(mutex_);
  if (!session_) return;
  std::string& out = session_->pending;
  size_t mark = out.size();
  out.append(",\n{\"ph\":\"i\",\"s\":\"g\",\"pid\":0,\"tid\":0,\"ts\":");
  append_micros(out, session_->now_ns());
  out.append(",\"name\":");
  append_string(out, what);
  out.push_back('}');
  reserve_locked(out.size() - mark);
}

}  // namespace runrun
