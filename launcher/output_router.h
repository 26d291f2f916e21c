#pragma once
// Why: mpirun tags every piece of output a rank writes ("[1,3]<stderr>:text"; a line written
// in several writes arrives as several tagged pieces, possibly between other ranks' pieces);
// the launcher joins each rank's pieces into lines, rewrites the tag to "[3]<stderr>:", copies each rank's lines into DIR/rank.N/{stdout,stderr} when
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
  // Where the text being read on a pipe belongs: a rank's stream, or mpirun itself (rank -1).
  struct Owner {
    int rank = -1;
    bool is_stderr = false;
  };
  void process(int pipe);
  void append(const Owner& owner, int pipe, std::string_view text);
  void emit_line(const Owner& owner, int pipe, std::string line);
  std::FILE* rank_file(int rank, bool is_stderr);

  std::FILE* out_;
  std::FILE* err_;
  std::string output_dir_;
  int num_proc_;
  int rank_digits_;
  std::string pending_[2];  // unparsed bytes per pipe (0 stdout, 1 stderr)
  Owner owner_[2];           // owner of the text that follows on each pipe
  std::map<std::pair<int, bool>, std::string> partial_;  // unfinished line per rank stream
  std::string untagged_[2];  // unfinished line of mpirun's own output per pipe
  std::vector<RankEvent> events_;
  std::map<std::pair<int, bool>, std::FILE*> files_;
};

}  // namespace runrun::launcher
