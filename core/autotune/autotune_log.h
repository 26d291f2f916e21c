#pragma once
// Why: the record of what autotuning measured and chose, as CSV a user can plot or diff:
// one row per sample (warmup ones included, marked) and a last row with the frozen values.
// Written by rank 0 only; each row is flushed, so a job that dies mid-search leaves what it
// measured. A file that cannot be opened is reported by the caller and tuning goes on.
// Thread-safety: owned by the global set's background thread.

#include <cstdint>
#include <fstream>
#include <string>

#include "core/autotune/autotune_search.h"

namespace runrun {

class AutotuneLog {
 public:
  // The header row, for tests and docs.
  static const char* header();

  // Opens (truncates) `path` and writes the header; false (with *error set) when it cannot.
  bool open(const std::string& path, std::string* error);
  bool is_open() const { return out_.is_open(); }

  // kind: "warmup", "sample" or "final". For "final", bytes/seconds are 0 and score is the
  // frozen setting's median score.
  void row(int64_t sample, const std::string& kind, uint64_t round,
           const TunedParameters& parameters, uint64_t bytes, double seconds, double score);

 private:
  std::ofstream out_;
};

}  // namespace runrun
