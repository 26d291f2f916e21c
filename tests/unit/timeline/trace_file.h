#pragma once
// Why: shared helpers of the timeline tests: unique temporary paths, reading a trace back as
// strict JSON, and checking that B/E spans balance per row.
// Thread-safety: plain functions.

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "tests/unit/timeline/json_reader.h"

namespace runrun::test {

// A fresh path in the temporary directory, removed when the object goes away.
class TempPath {
 public:
  explicit TempPath(const std::string& stem);
  ~TempPath();
  TempPath(const TempPath&) = delete;
  TempPath& operator=(const TempPath&) = delete;
  const std::string& str() const { return path_; }

 private:
  std::string path_;
};

std::string read_file(const std::string& path);

// The trace's events; REQUIREs (Catch) that the file is a strict JSON array of objects.
std::vector<JsonValue> read_trace(const std::string& path);

// Events of one kind ("B", "E", "i", "M").
std::vector<JsonValue> events_of(const std::vector<JsonValue>& events, const std::string& ph);

// pid -> row name from the process_name metadata (Horovod's layout: a row per pid, pid 0 the
// rank itself, left out); REQUIREs each pid is named once.
std::map<int, std::string> row_names(const std::vector<JsonValue>& events);

// REQUIREs that, in file order, every E ends the innermost open B of its pid with the same name,
// every pid ends with nothing open, and timestamps never go backwards. Returns the B count.
size_t check_balanced(const std::vector<JsonValue>& events);

}  // namespace runrun::test
