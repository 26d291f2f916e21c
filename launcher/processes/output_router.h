#pragma once
// Why: mpirun tags every piece of output a rank writes ("[1,3]<stderr>:text"; a line written
// in several writes arrives as several tagged pieces, possibly between other ranks' pieces;
// srun --label writes whole lines as "3: text", on the stream the rank wrote to);
// the launcher joins each rank's pieces into lines, rewrites the tag to "[3]<stderr>:", copies each
// rank's lines into DIR/rank.N/{stdout,stderr} when
// --output-filename is given, and takes out the rank shim's marker lines (start/exit events)
// so the supervisor sees them and the user does not. mpirun's own boxed reports of how the job
// ended ("Primary job terminated normally, but 1 process returned a non-zero exit code...")
// are held back: the launcher's one-line summary replaces them; the supervisor releases them
// when it has no better explanation, and --verbose shows them as they come. The same holds for
// mpirun's report of a daemon it lost (which host: the supervisor's summary names it) and for
// mpirun's own crash report (launcher/processes/mpirun_reports.h).
// Thread-safety: not thread-safe; the supervisor's single loop owns it.

#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "launcher/processes/rank_report.h"

namespace runrun::launcher {

class OutputRouter {
 public:
  // Lines go to `out` / `err` (by the stream the rank wrote to); files under `output_dir` when
  // it is not empty (the directory must exist). `num_proc` sets the zero padding of rank.N.
  // `show_job_end_boxes`: print mpirun's job-end boxes as they come instead of holding them.
  // `timestamp_lines` (--prefix-output-with-timestamp): every rank line, on the terminal and in
  // the files, begins with the local time it arrived, as horovodrun writes it ("Tue Mar  3
  // 14:05:09 2026[1]<stdout>:text"). `srun_labels`: the tagged output is srun's (--label), not
  // mpirun's.
  OutputRouter(std::FILE* out, std::FILE* err, std::string output_dir, int num_proc,
               bool show_job_end_boxes = false, bool timestamp_lines = false,
               bool srun_labels = false);
  ~OutputRouter();
  OutputRouter(const OutputRouter&) = delete;
  OutputRouter& operator=(const OutputRouter&) = delete;

  // Bytes read from mpirun's stdout (from_stderr false) or stderr.
  void feed(bool from_stderr, std::string_view bytes);
  // Bytes read from one rank's own stdout or stderr pipe (ranks the launcher started itself:
  // untagged, and known to be that rank's).
  void feed_rank(int rank, bool from_stderr, std::string_view bytes);
  // Emits what is left of unterminated lines (call once mpirun's output closed).
  void finish();
  // Rank events seen since the last call, in arrival order.
  std::vector<RankEvent> take_events();
  // Prints the job-end boxes held back so far (to the stream mpirun wrote them to).
  void release_held_boxes();
  // The nodes whose Open MPI daemon mpirun reported lost, in order.
  const std::vector<std::string>& lost_daemon_nodes() const { return lost_daemon_nodes_; }
  // mpirun's own crash report (signal report lines), held back; empty when it did not crash.
  const std::vector<std::string>& crash_report() const { return crash_report_; }
  // Prints the crash report held back (mpirun's own account is the only one there is).
  void release_crash_report();
  // With --output-filename: what could not be kept in the rank files (a file that could not be
  // created, a write that failed: a full disk, a read-only folder), one line each with the file,
  // the bytes lost and the OS's reason; empty when every line was kept. Call after finish().
  std::vector<std::string> lost_output() const;

 private:
  // Where the text being read on a pipe belongs: a rank's stream, or mpirun itself (rank -1).
  struct Owner {
    int rank = -1;
    bool is_stderr = false;
  };
  void process(int pipe);
  void append(const Owner& owner, int pipe, std::string_view text);
  void emit_line(const Owner& owner, int pipe, std::string line);
  void emit_mpirun_line(int pipe, const std::string& line);
  void print_mpirun_line(int pipe, const std::string& line);

  std::FILE* out_;
  std::FILE* err_;
  std::string output_dir_;
  int num_proc_;
  int rank_digits_;
  std::string pending_[2];  // unparsed bytes per pipe (0 stdout, 1 stderr)
  Owner owner_[2];          // owner of the text that follows on each pipe
  std::map<std::pair<int, bool>, std::string> partial_;  // unfinished line per rank stream
  std::string untagged_[2];  // unfinished line of mpirun's own output per pipe
  std::vector<RankEvent> events_;
  bool show_job_end_boxes_;
  bool timestamp_lines_;
  bool srun_labels_;
  bool at_line_start_[2] = {true, true};  // per pipe: the next byte begins a line (srun labels)
  std::vector<std::string> box_[2];       // lines of an unfinished box of mpirun's, per pipe
  std::vector<std::string> lost_daemon_nodes_;
  std::vector<std::string> crash_report_;
  int crash_pipe_ = 1;
  bool in_crash_report_ = false;
  std::vector<std::pair<int, std::string>> held_;  // (pipe, line) of job-end boxes held back
  // A rank's file under output_dir_; `file` is null once it could not be opened or written,
  // and what was meant for it from then on is counted in `lost_bytes`.
  struct RankFile {
    std::FILE* file = nullptr;
    std::string path;
    std::string failure;  // "" while it works; else what failed, with the OS's reason
    size_t kept_bytes = 0;
    size_t lost_bytes = 0;
  };
  RankFile& rank_file_entry(int rank, bool is_stderr);
  void write_rank_file(int rank, bool is_stderr, const std::string& text);
  std::map<std::pair<int, bool>, RankFile> files_;
};

// --output-filename: says last, on stderr, what `router`'s rank files under `output_dir` could
// not keep, one line each; a job that otherwise succeeded (`exit_code` 0) then exits 1: its
// output is incomplete. Returns the exit code.
int report_lost_output(const OutputRouter& router, const std::string& output_dir, int exit_code);

}  // namespace runrun::launcher
