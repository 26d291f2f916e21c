#pragma once
// Why: mpirun tags every line a rank writes ("[1,3]<stderr>:text"); the launcher rewrites the
// tag to "[3]<stderr>:", copies each rank's lines into DIR/rank.N/{stdout,stderr} when
// --output-filename is given, and takes out the rank shim's marker lines (start/exit events)
// so the supervisor sees them and the user does not.
// Thread-safety: not thread-safe; the supervisor's single loop owns it.

#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "launcher/rank_report.h"

namespace runrun::launcher {

class OutputRouter {
 public:
  // Lines go to `out` / `err` (by the stream the rank wrote to); files under `output_dir` when
  // it is not empty (the directory must exist). `num_proc` sets the zero padding of rank.N.
  OutputRouter(std::FILE* out, std::FILE* err, std::string output_dir, int num_proc);
  ~OutputRouter();
  OutputRouter(const OutputRouter&) = delete;
  OutputRouter& operator=(const OutputRouter&) = delete;

  // Bytes read from mpirun's stdout (from_stderr false) or stderr.
  void feed(bool from_stderr, std::string_view bytes);
  // Emits what is left of unterminated lines (call once mpirun's output closed).
  void finish();
  // Rank events seen since the last call, in arrival order.
  std::vector<RankEvent> take_events();

 private:
  void route_line(bool from_stderr, std::string_view line);
  std::FILE* rank_file(int rank, bool is_stderr);

  std::FILE* out_;
  std::FILE* err_;
  std::string output_dir_;
  int num_proc_;
  int rank_digits_;
  std::string pending_[2];
  std::vector<RankEvent> events_;
  std::map<std::pair<int, bool>, std::FILE*> files_;
};

}  // namespace runrun::launcher
