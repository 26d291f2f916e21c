#include "launcher/output_router.h"

#include <sys/stat.h>

#include <charconv>

namespace runrun::launcher {
namespace {

struct TaggedLine {
  int rank = -1;                // -1: not a rank's line (mpirun's own message)
  bool is_stderr = false;
  std::string_view text;
};

// Parses "[JOB,RANK]<stdout>:text" / "<stderr>:" / "<stddiag>:".
TaggedLine parse_tag(std::string_view line, bool from_stderr) {
  TaggedLine tagged;
  tagged.text = line;
  tagged.is_stderr = from_stderr;
  if (line.empty() || line[0] != '[') return tagged;
  const auto comma = line.find(',');
  const auto close = line.find(']');
  if (comma == std::string_view::npos || close == std::string_view::npos || comma > close) {
    return tagged;
  }
  int rank = -1;
  const auto [ptr, ec] = std::from_chars(line.data() + comma + 1, line.data() + close, rank);
  if (ec != std::errc() || ptr != line.data() + close) return tagged;
  const auto rest = line.substr(close + 1);
  for (std::string_view stream : {"<stdout>:", "<stderr>:", "<stddiag>:"}) {
    if (rest.substr(0, stream.size()) == stream) {
      tagged.rank = rank;
      tagged.is_stderr = stream != "<stdout>:";
      tagged.text = rest.substr(stream.size());
    }
  }
  return tagged;
}

}  // namespace

OutputRouter::OutputRouter(std::FILE* out, std::FILE* err, std::string output_dir, int num_proc)
    : out_(out), err_(err), output_dir_(std::move(output_dir)), num_proc_(num_proc), rank_digits_(1) {
  for (int n = num_proc - 1; n >= 10; n /= 10) ++rank_digits_;
}

OutputRouter::~OutputRouter() {
  for (auto& [key, file] : files_) {
    if (file != nullptr) std::fclose(file);
  }
}

void OutputRouter::feed(bool from_stderr, std::string_view bytes) {
  std::string& pending = pending_[from_stderr ? 1 : 0];
  pending.append(bytes);
  std::size_t start = 0;
  for (auto newline = pending.find('\n'); newline != std::string::npos;
       newline = pending.find('\n', start)) {
    route_line(from_stderr, std::string_view(pending).substr(start, newline - start));
    start = newline + 1;
  }
  pending.erase(0, start);
}

void OutputRouter::finish() {
  for (int i = 0; i < 2; ++i) {
    if (!pending_[i].empty()) route_line(i == 1, pending_[i]);
    pending_[i].clear();
  }
  if (!output_dir_.empty()) {  // every rank gets both files, even when it wrote nothing
    for (int rank = 0; rank < num_proc_; ++rank) {
      rank_file(rank, false);
      rank_file(rank, true);
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

void OutputRouter::route_line(bool from_stderr, std::string_view line) {
  const TaggedLine tagged = parse_tag(line, from_stderr);
  std::string text(tagged.text);
  std::string rest;
  if (const auto event = find_rank_event(text, &rest)) {
    events_.push_back(*event);
    if (rest.empty()) return;  // a marker line of its own
    text = rest;
  }
  std::FILE* terminal = tagged.is_stderr ? err_ : out_;
  if (tagged.rank < 0) {
    std::fprintf(terminal, "%s\n", text.c_str());
  } else {
    std::fprintf(terminal, "[%d]<%s>:%s\n", tagged.rank, tagged.is_stderr ? "stderr" : "stdout",
                 text.c_str());
    if (std::FILE* file = rank_file(tagged.rank, tagged.is_stderr)) {
      std::fprintf(file, "%s\n", text.c_str());
      std::fflush(file);
    }
  }
  std::fflush(terminal);
}

std::FILE* OutputRouter::rank_file(int rank, bool is_stderr) {
  if (output_dir_.empty()) return nullptr;
  const auto key = std::make_pair(rank, is_stderr);
  if (const auto it = files_.find(key); it != files_.end()) return it->second;
  std::string number = std::to_string(rank);
  if (static_cast<int>(number.size()) < rank_digits_) {
    number.insert(0, static_cast<std::size_t>(rank_digits_) - number.size(), '0');
  }
  const std::string dir = output_dir_ + "/rank." + number;
  mkdir(dir.c_str(), 0755);
  std::FILE* file = std::fopen((dir + (is_stderr ? "/stderr" : "/stdout")).c_str(), "w");
  if (file == nullptr) {
    std::fprintf(err_, "runrun: cannot write %s/%s; rank %d's output goes to the terminal only\n",
                 dir.c_str(), is_stderr ? "stderr" : "stdout", rank);
  }
  files_[key] = file;
  return file;
}

}  // namespace runrun::launcher
