#include "launcher/processes/output_router.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <ctime>

#include "launcher/processes/mpirun_reports.h"

namespace runrun::launcher {
namespace {

constexpr std::size_t kMaxTagLength = 40;  // "[JOB,RANK]<stddiag>:" with large numbers

// Result of looking for a tag at the start of `text`.
enum class TagMatch { kNo, kYes, kIncomplete };

// Matches "[JOB,RANK]<stdout>:" / "<stderr>:" / "<stddiag>:" at the start of `text`.
TagMatch match_tag(std::string_view text, int* rank, bool* is_stderr, std::size_t* length) {
  if (text.empty() || text[0] != '[') return TagMatch::kNo;
  std::size_t i = 1;
  const auto digits = [&]() {
    const std::size_t first = i;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') ++i;
    return i > first;
  };
  if (!digits()) return i == text.size() ? TagMatch::kIncomplete : TagMatch::kNo;
  if (i == text.size()) return TagMatch::kIncomplete;
  if (text[i++] != ',') return TagMatch::kNo;
  const std::size_t rank_start = i;
  if (!digits()) return i == text.size() ? TagMatch::kIncomplete : TagMatch::kNo;
  const std::size_t rank_end = i;
  for (std::string_view stream : {"]<stdout>:", "]<stderr>:", "]<stddiag>:"}) {
    const auto rest = text.substr(i, stream.size());
    if (rest == stream) {
      std::from_chars(text.data() + rank_start, text.data() + rank_end, *rank);
      *is_stderr = stream != "]<stdout>:";
      *length = i + stream.size();
      return TagMatch::kYes;
    }
    if (rest.size() < stream.size() && stream.substr(0, rest.size()) == rest) {
      return TagMatch::kIncomplete;
    }
  }
  return TagMatch::kNo;
}

// Matches srun --label's "R: " (R right-aligned with spaces) at the start of a line.
TagMatch match_srun_label(std::string_view text, int* rank, std::size_t* length) {
  std::size_t i = 0;
  while (i < text.size() && text[i] == ' ') ++i;
  const std::size_t first = i;
  while (i < text.size() && text[i] >= '0' && text[i] <= '9') ++i;
  if (i == text.size()) return i - first < 10 ? TagMatch::kIncomplete : TagMatch::kNo;
  if (i == first || text[i] != ':') return TagMatch::kNo;
  if (i + 1 == text.size()) return TagMatch::kIncomplete;
  if (text[i + 1] != ' ') return TagMatch::kNo;
  std::from_chars(text.data() + first, text.data() + i, *rank);
  *length = i + 2;
  return TagMatch::kYes;
}

// mpirun frames its multi-line reports with lines of dashes.
bool is_box_rule(const std::string& line) {
  return line.size() >= 20 && line.find_first_not_of('-') == std::string::npos;
}

// Boxes that only say how the job ended, which the launcher's summary says in one line.
bool is_job_end_box(const std::vector<std::string>& box) {
  for (const auto& line : box) {
    for (const char* text :
         {"Primary job  terminated normally", "Primary job terminated normally",
          "mpirun detected that one or more processes exited", "mpirun noticed that process rank",
          "has lost communication with a remote daemon"}) {
      if (line.find(text) != std::string::npos) return true;
    }
  }
  return false;
}

// The local time as C's asctime() writes it, without its newline: "Tue Mar  3 14:05:09 2026".
std::string local_time_now() {
  const std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  char text[64] = {};
  std::strftime(text, sizeof(text), "%a %b %e %H:%M:%S %Y", &local);
  return text;
}

}  // namespace

OutputRouter::OutputRouter(std::FILE* out, std::FILE* err, std::string output_dir, int num_proc,
                           bool show_job_end_boxes, bool timestamp_lines, bool srun_labels)
    : out_(out),
      err_(err),
      output_dir_(std::move(output_dir)),
      num_proc_(num_proc),
      rank_digits_(1),
      show_job_end_boxes_(show_job_end_boxes),
      timestamp_lines_(timestamp_lines),
      srun_labels_(srun_labels) {
  for (int n = num_proc - 1; n >= 10; n /= 10) ++rank_digits_;
}

OutputRouter::~OutputRouter() {
  for (auto& [key, entry] : files_) {
    if (entry.file != nullptr) std::fclose(entry.file);
  }
}

void OutputRouter::feed(bool from_stderr, std::string_view bytes) {
  const int pipe = from_stderr ? 1 : 0;
  pending_[pipe].append(bytes);
  process(pipe);
}

void OutputRouter::feed_rank(int rank, bool from_stderr, std::string_view bytes) {
  const Owner owner{rank, from_stderr};
  const int pipe = from_stderr ? 1 : 0;
  while (!bytes.empty()) {
    const std::size_t end = std::min(bytes.find('\n'), bytes.size() - 1);
    append(owner, pipe, bytes.substr(0, end + 1));
    bytes.remove_prefix(end + 1);
  }
}

void OutputRouter::process(int pipe) {
  std::string& data = pending_[pipe];
  std::size_t pos = 0;
  while (pos < data.size()) {
    Owner tagged;
    std::size_t length = 0;
    const bool line_start = pos == 0 ? at_line_start_[pipe] : data[pos - 1] == '\n';
    TagMatch match = TagMatch::kNo;
    if (!srun_labels_) {
      match =
          match_tag(std::string_view(data).substr(pos), &tagged.rank, &tagged.is_stderr, &length);
    } else if (line_start) {
      match = match_srun_label(std::string_view(data).substr(pos), &tagged.rank, &length);
      tagged.is_stderr = pipe == 1;
    }
    if (match == TagMatch::kIncomplete && data.size() - pos < kMaxTagLength) break;
    if (match == TagMatch::kYes) {
      owner_[pipe] = tagged;
      pos += length;
      continue;
    }
    // Text up to the next newline or possible tag ('[' not at pos) belongs to the owner.
    auto next = data.find_first_of("\n[", pos + 1);
    if (data[pos] == '\n') next = pos;
    if (next == std::string::npos) next = data.size();
    if (next < data.size() && data[next] == '\n') {
      append(owner_[pipe], pipe, std::string_view(data).substr(pos, next + 1 - pos));
      owner_[pipe] = Owner{};  // a line that starts without a tag is mpirun's own
      pos = next + 1;
    } else {
      append(owner_[pipe], pipe, std::string_view(data).substr(pos, next - pos));
      pos = next;
    }
  }
  if (pos > 0) at_line_start_[pipe] = data[pos - 1] == '\n';
  data.erase(0, pos);
}

void OutputRouter::append(const Owner& owner, int pipe, std::string_view text) {
  std::string& line =
      owner.rank < 0 ? untagged_[pipe] : partial_[std::make_pair(owner.rank, owner.is_stderr)];
  line.append(text);
  if (!line.empty() && line.back() == '\n') {
    line.pop_back();
    std::string complete;
    complete.swap(line);
    emit_line(owner, pipe, std::move(complete));
  }
}

void OutputRouter::finish() {
  for (int pipe = 0; pipe < 2; ++pipe) {
    append(owner_[pipe], pipe, pending_[pipe]);
    pending_[pipe].clear();
    if (!untagged_[pipe].empty()) emit_line(Owner{}, pipe, std::move(untagged_[pipe]));
    untagged_[pipe].clear();
    for (const auto& line : box_[pipe]) print_mpirun_line(pipe, line);  // never closed
    box_[pipe].clear();
  }
  for (auto& [key, line] : partial_) {
    if (!line.empty()) emit_line(Owner{key.first, key.second}, key.second ? 1 : 0, line);
  }
  partial_.clear();
  if (!output_dir_.empty()) {  // every rank gets both files, even when it wrote nothing
    for (int rank = 0; rank < num_proc_; ++rank) {
      rank_file_entry(rank, false);
      rank_file_entry(rank, true);
    }
  }
  std::fflush(out_);
  std::fflush(err_);
}

std::vector<RankEvent> OutputRouter::take_events() {
  std::vector<RankEvent> events;
  events.swap(events_);
  return events;
}

void OutputRouter::emit_line(const Owner& owner, int pipe, std::string line) {
  std::string rest;
  if (const auto event = find_rank_event(line, &rest)) {
    events_.push_back(*event);
    if (rest.empty()) return;  // a marker line of its own
    line = rest;
  }
  if (owner.rank < 0) {
    emit_mpirun_line(pipe, line);
    return;
  }
  std::FILE* terminal = owner.is_stderr ? err_ : out_;
  const std::string time = timestamp_lines_ ? local_time_now() : "";
  std::fprintf(terminal, "%s[%d]<%s>:%s\n", time.c_str(), owner.rank,
               owner.is_stderr ? "stderr" : "stdout", line.c_str());
  std::fflush(terminal);
  if (!output_dir_.empty()) write_rank_file(owner.rank, owner.is_stderr, time + line + "\n");
}

void OutputRouter::write_rank_file(int rank, bool is_stderr, const std::string& text) {
  RankFile& entry = rank_file_entry(rank, is_stderr);
  if (entry.file == nullptr) {
    entry.lost_bytes += text.size();
    return;
  }
  errno = 0;
  const bool written = std::fwrite(text.data(), 1, text.size(), entry.file) == text.size() &&
                       std::fflush(entry.file) == 0;
  if (written) {
    entry.kept_bytes += text.size();
    return;
  }
  // What stdio buffered but could not write is lost too; the file keeps what reached it.
  entry.failure = std::string("writing failed after ") + std::to_string(entry.kept_bytes) +
                  " bytes: " + (errno != 0 ? std::strerror(errno) : "an I/O error");
  std::fclose(entry.file);
  entry.file = nullptr;
  entry.lost_bytes += text.size();
  std::fprintf(err_, "runrun: %s: %s; rank %d's %s from here on goes to the terminal only\n",
               entry.path.c_str(), entry.failure.c_str(), rank, is_stderr ? "stderr" : "stdout");
  std::fflush(err_);
}

std::vector<std::string> OutputRouter::lost_output() const {
  std::vector<std::string> lost;
  for (const auto& [key, entry] : files_) {
    if (entry.failure.empty()) continue;
    lost.push_back(entry.path + ": " + std::to_string(entry.lost_bytes) + " bytes of rank " +
                   std::to_string(key.first) + "'s " + (key.second ? "stderr" : "stdout") +
                   " not kept (" + entry.failure + ")");
  }
  return lost;
}

void OutputRouter::emit_mpirun_line(int pipe, const std::string& line) {
  if (!show_job_end_boxes_ && (in_crash_report_ || starts_crash_report(line))) {
    in_crash_report_ = !ends_crash_report(line);
    crash_report_.push_back(line);
    crash_pipe_ = pipe;
    return;
  }
  std::vector<std::string>& box = box_[pipe];
  if (box.empty() && !is_box_rule(line)) {
    print_mpirun_line(pipe, line);
    return;
  }
  box.push_back(line);
  if (box.size() == 1 || !is_box_rule(line)) return;  // the box goes on
  if (const auto node = lost_daemon_node(box)) lost_daemon_nodes_.push_back(*node);
  const bool hold = !show_job_end_boxes_ && is_job_end_box(box);
  for (const auto& boxed : box) {
    if (hold) {
      held_.emplace_back(pipe, boxed);
    } else {
      print_mpirun_line(pipe, boxed);
    }
  }
  box.clear();
}

void OutputRouter::print_mpirun_line(int pipe, const std::string& line) {
  std::FILE* terminal = pipe == 1 ? err_ : out_;
  std::fprintf(terminal, "%s\n", line.c_str());
  std::fflush(terminal);
}

void OutputRouter::release_held_boxes() {
  for (const auto& [pipe, line] : held_) print_mpirun_line(pipe, line);
  held_.clear();
}

void OutputRouter::release_crash_report() {
  for (const auto& line : crash_report_) print_mpirun_line(crash_pipe_, line);
  crash_report_.clear();
}

OutputRouter::RankFile& OutputRouter::rank_file_entry(int rank, bool is_stderr) {
  const auto key = std::make_pair(rank, is_stderr);
  if (const auto it = files_.find(key); it != files_.end()) return it->second;
  std::string number = std::to_string(rank);
  if (static_cast<int>(number.size()) < rank_digits_) {
    number.insert(0, static_cast<std::size_t>(rank_digits_) - number.size(), '0');
  }
  const std::string dir = output_dir_ + "/rank." + number;
  RankFile& entry = files_[key];
  entry.path = dir + (is_stderr ? "/stderr" : "/stdout");
  errno = 0;
  if (mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
    entry.failure = std::string("cannot create ") + dir + ": " + std::strerror(errno);
  } else if ((entry.file = std::fopen(entry.path.c_str(), "w")) == nullptr) {
    entry.failure = std::string("cannot create it: ") + std::strerror(errno);
  }
  if (entry.file == nullptr) {
    std::fprintf(err_, "runrun: %s: %s; rank %d's %s goes to the terminal only\n",
                 entry.path.c_str(), entry.failure.c_str(), rank, is_stderr ? "stderr" : "stdout");
  }
  return entry;
}

int report_lost_output(const OutputRouter& router, const std::string& output_dir, int exit_code) {
  const std::vector<std::string> lost = router.lost_output();
  for (const std::string& line : lost)
    std::fprintf(stderr, "runrun: output lost: %s\n", line.c_str());
  if (lost.empty() || exit_code != 0) return exit_code;
  std::fprintf(stderr,
               "runrun: every rank succeeded, but %zu output file(s) under %s are "
               "incomplete: exiting 1\n",
               lost.size(), output_dir.c_str());
  return 1;
}

}  // namespace runrun::launcher
