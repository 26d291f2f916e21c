#include "tests/unit/timeline/trace_file.h"

#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>

namespace runrun::test {

TempPath::TempPath(const std::string& stem) {
  static std::atomic<int> counter{0};
  path_ = (std::filesystem::temp_directory_path() /
           (stem + "." + std::to_string(::getpid()) + "." + std::to_string(counter++) + ".json"))
              .string();
  std::filesystem::remove(path_);
}

TempPath::~TempPath() {
  std::error_code ignored;
  std::filesystem::remove(path_, ignored);
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE(in.good());
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<JsonValue> read_trace(const std::string& path) {
  JsonValue document;
  std::string text = read_file(path);
  INFO("trace file " << path);
  REQUIRE_NOTHROW(document = parse_json(text));
  REQUIRE(document.kind == JsonValue::Kind::kArray);
  for (const JsonValue& event : document.items) REQUIRE(event.kind == JsonValue::Kind::kObject);
  return document.items;
}

std::vector<JsonValue> events_of(const std::vector<JsonValue>& events, const std::string& ph) {
  std::vector<JsonValue> out;
  for (const JsonValue& event : events) {
    if (event.at("ph").text == ph) out.push_back(event);
  }
  return out;
}

std::map<int, std::string> row_names(const std::vector<JsonValue>& events) {
  std::map<int, std::string> names;
  for (const JsonValue& event : events_of(events, "M")) {
    if (event.at("name").text != "process_name") continue;
    int pid = static_cast<int>(event.at("pid").number);
    if (pid == 0) continue;  // the rank itself
    INFO("pid " << pid);
    REQUIRE(names.emplace(pid, event.at("args").at("name").text).second);
  }
  return names;
}

size_t check_balanced(const std::vector<JsonValue>& events) {
  std::map<int, std::vector<std::string>> open;
  double last_ts = 0;
  size_t begins = 0;
  for (const JsonValue& event : events) {
    const std::string& ph = event.at("ph").text;
    if (ph == "M") continue;
    double ts = event.at("ts").number;
    REQUIRE(ts >= last_ts);
    last_ts = ts;
    int pid = static_cast<int>(event.at("pid").number);
    if (ph == "B") {
      open[pid].push_back(event.at("name").text);
      ++begins;
    } else if (ph == "E") {
      INFO("E " << event.at("name").text << " on pid " << pid);
      REQUIRE(!open[pid].empty());
      REQUIRE(open[pid].back() == event.at("name").text);
      open[pid].pop_back();
    }
  }
  for (const auto& [pid, stack] : open) {
    INFO("pid " << pid);
    REQUIRE(stack.empty());
  }
  return begins;
}

}  // namespace runrun::test
