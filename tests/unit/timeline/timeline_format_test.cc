// The timeline's file format on one thread: event fields, escaping, nesting, restarts, the
// memory cap, inactive timelines and the error for an unopenable path.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include "common/errors.h"
#include "core/timeline/timeline.h"
#include "tests/unit/timeline/trace_file.h"

namespace runrun {
namespace {

using test::events_of;
using test::read_trace;
using test::row_names;
using test::TempPath;

TEST_CASE("json escaping of quotes, backslashes, control characters and bad UTF-8") {
  std::string out;
  append_json_escaped(out, "a\"b\\c\nd\re\tf\bg\fh\x01i\x1f");
  CHECK(out == R"(a\"b\\c\nd\re\tf\bg\fh\u0001i\u001f)");
  out.clear();
  append_json_escaped(out, "gr\xC3\xBC\xC3\x9F \xE2\x82\xAC \xF0\x9F\x98\x80");  // valid UTF-8 kept
  CHECK(out == "gr\xC3\xBC\xC3\x9F \xE2\x82\xAC \xF0\x9F\x98\x80");
  out.clear();
  append_json_escaped(out, "x\xC3(\xFFy\xE2\x82");  // truncated / invalid sequences
  CHECK(out == R"(x\ufffd(\ufffdy\ufffd\ufffd)");
  out.clear();
  append_json_escaped(out, std::string_view("nul\0end", 7));
  CHECK(out == R"(nul\u0000end)");
}

TEST_CASE("a trace holds process and row metadata and B/E/i events with args") {
  TempPath path("timeline_format");
  {
    Timeline timeline;
    CHECK_FALSE(timeline.active());
    timeline.start(path.str(), 3);
    CHECK(timeline.active());
    timeline.begin("grad/w", "NEGOTIATE", {{"late_ranks", "1, 2"}});
    timeline.end("grad/w", "NEGOTIATE");
    timeline.begin("grad/w", "ALLREDUCE", {{"fused_with", "4"}, {"bytes", "4096"}});
    timeline.begin("grad/w", "MEMCPY_IN_FUSION_BUFFER");
    timeline.end("grad/w", "MEMCPY_IN_FUSION_BUFFER");
    timeline.instant("grad/b", "CACHE_HIT", {{"bit", "7"}});
    timeline.end("grad/w", "ALLREDUCE");
    timeline.stop();
    CHECK_FALSE(timeline.active());
    timeline.stop();  // idempotent
  }
  auto events = read_trace(path.str());
  auto meta = events_of(events, "M");
  REQUIRE(meta.size() >= 1);
  CHECK(meta[0].at("name").text == "process_name");
  CHECK(meta[0].at("pid").number == 0);  // Horovod's layout: pid 0 is the rank, rows from 1
  CHECK(meta[0].at("args").at("name").text == "rank 3");
  CHECK(meta[0].at("args").at("start_time_since_epoch_in_micros").number > 1.7e15);
  auto names = row_names(events);
  REQUIRE(names.size() == 2);
  CHECK(names.at(1) == "grad/w");
  CHECK(names.at(2) == "grad/b");
  CHECK(test::check_balanced(events) == 3);

  auto begins = events_of(events, "B");
  CHECK(begins[0].at("name").text == "NEGOTIATE");
  CHECK(begins[0].at("pid").number == 1);
  CHECK(begins[0].at("args").at("late_ranks").text == "1, 2");
  CHECK(begins[1].at("args").at("fused_with").text == "4");
  CHECK(begins[1].at("args").at("bytes").text == "4096");
  CHECK_FALSE(begins[2].has("args"));
  auto instants = events_of(events, "i");
  REQUIRE(instants.size() == 1);
  CHECK(instants[0].at("name").text == "CACHE_HIT");
  CHECK(instants[0].at("pid").number == 2);
  CHECK(instants[0].at("s").text == "t");
  CHECK(instants[0].at("args").at("bit").text == "7");
  std::vector<std::string> ends;
  for (const auto& event : events_of(events, "E")) ends.push_back(event.at("name").text);
  CHECK(ends == std::vector<std::string>{"NEGOTIATE", "MEMCPY_IN_FUSION_BUFFER", "ALLREDUCE"});
}

TEST_CASE("names and args with quotes, backslashes and newlines survive the round trip") {
  TempPath path("timeline_escape");
  const std::string tensor = "layer\"1\"\\weight\nline2\t\x01";
  const std::string value = "va\\l\"ue\n";
  Timeline timeline;
  timeline.start(path.str(), 0);
  timeline.begin(tensor, "QUE\"UE", {{"k\"ey\\", value}});
  timeline.end(tensor, "QUE\"UE");
  timeline.stop();
  auto events = read_trace(path.str());
  CHECK(row_names(events).at(1) == tensor);
  auto begins = events_of(events, "B");
  REQUIRE(begins.size() == 1);
  CHECK(begins[0].at("name").text == "QUE\"UE");
  CHECK(begins[0].at("args").at("k\"ey\\").text == value);
  CHECK(test::check_balanced(events) == 1);
}

TEST_CASE("python's json module accepts the trace") {
  TempPath path("timeline_python");
  Timeline timeline;
  timeline.start(path.str(), 1);
  timeline.begin("a\"b\\c\nd", "ALLREDUCE", {{"x", "\x02\xC3\xA9"}});
  timeline.end("a\"b\\c\nd", "ALLREDUCE");
  timeline.stop();
  std::string command =
      "timeout 60 python3 -c 'import json,sys; e=json.load(open(sys.argv[1])); "
      "sys.exit(0 if e[-1][\"ph\"]==\"E\" else 3)' '" +
      path.str() + "'";
  CHECK(std::system(command.c_str()) == 0);
}

TEST_CASE("end closes nested spans and ignores unmatched ends, stop ends what is open") {
  TempPath path("timeline_nesting");
  Timeline timeline;
  timeline.start(path.str(), 0);
  timeline.end("t", "QUEUE");  // never begun: ignored (no row, no event)
  timeline.begin("t", "ALLREDUCE");
  timeline.begin("t", "MEMCPY_IN_FUSION_BUFFER");
  timeline.end("t", "QUEUE");      // not open: ignored
  timeline.end("t", "ALLREDUCE");  // ends the copy inside it too
  timeline.begin("t", "NEGOTIATE");
  timeline.begin("u", "QUEUE");
  timeline.stop();  // ends NEGOTIATE on t and QUEUE on u
  auto events = read_trace(path.str());
  CHECK(test::check_balanced(events) == 4);
  std::vector<std::string> ends;
  for (const auto& event : events_of(events, "E")) ends.push_back(event.at("name").text);
  CHECK(ends.size() == 4);
  CHECK(ends[0] == "MEMCPY_IN_FUSION_BUFFER");
  CHECK(ends[1] == "ALLREDUCE");
}

TEST_CASE("restart to another file closes the first and keeps rows stable") {
  TempPath first("timeline_first");
  TempPath second("timeline_second");
  Timeline timeline;
  timeline.start(first.str(), 2);
  timeline.begin("x", "NEGOTIATE");
  timeline.begin("y", "QUEUE");
  timeline.start(second.str(), 2);  // replaces: first is closed, its open spans ended
  timeline.end("x", "NEGOTIATE");   // begun in the first file: ignored here
  timeline.begin("y", "ALLREDUCE");
  timeline.end("y", "ALLREDUCE");
  timeline.stop();

  auto one = read_trace(first.str());
  CHECK(test::check_balanced(one) == 2);
  CHECK(row_names(one) == std::map<int, std::string>{{1, "x"}, {2, "y"}});
  auto two = read_trace(second.str());
  CHECK(test::check_balanced(two) == 1);
  CHECK(row_names(two) == std::map<int, std::string>{{2, "y"}});  // same pid, named again
  CHECK(events_of(two, "E").size() == 1);

  timeline.start(first.str(), 5);  // restart after stop truncates and starts over
  timeline.stop();
  auto three = read_trace(first.str());
  REQUIRE(three.size() == 2);  // process_name, process_sort_index
  CHECK(three[0].at("args").at("name").text == "rank 5");
}

TEST_CASE("an inactive timeline writes nothing and events after stop are ignored") {
  TempPath path("timeline_inactive");
  Timeline never;
  never.begin("t", "QUEUE");
  never.instant("t", "X");
  never.end("t", "QUEUE");
  never.stop();
  CHECK_FALSE(never.active());
  CHECK_FALSE(std::filesystem::exists(path.str()));

  Timeline timeline;
  timeline.start(path.str(), 0);
  timeline.stop();
  std::string closed = test::read_file(path.str());
  timeline.begin("t", "QUEUE");
  timeline.end("t", "QUEUE");
  timeline.instant("t", "X");
  timeline.stop();
  CHECK(test::read_file(path.str()) == closed);
  CHECK(events_of(read_trace(path.str()), "B").empty());
}

TEST_CASE("the destructor closes the file as valid JSON") {
  TempPath path("timeline_destructor");
  {
    Timeline timeline;
    timeline.start(path.str(), 0);
    timeline.begin("t", "ALLREDUCE");
  }
  auto events = read_trace(path.str());
  CHECK(test::check_balanced(events) == 1);
}

TEST_CASE("an unopenable path names the path and the OS error and nothing runs") {
  const std::string path = "/nonexistent-runrun-dir/sub/trace.json";
  Timeline timeline;
  try {
    timeline.start(path, 0);
    FAIL("start did not throw");
  } catch (const InvalidArgumentError& error) {
    std::string what = error.what();
    CHECK_THAT(what, Catch::Contains("'" + path + "'"));
    CHECK_THAT(what, Catch::Contains("No such file or directory"));
    CHECK_THAT(what, Catch::Contains("RUNRUN_TIMELINE"));
  }
  CHECK_FALSE(timeline.active());
  timeline.begin("t", "QUEUE");  // still inactive: harmless
  timeline.stop();
}

TEST_CASE("over the memory cap events are dropped, counted and noted in a valid trace") {
  TempPath path("timeline_cap");
  Timeline timeline(nullptr, 0);  // a cap of 0 bytes: every event is over it
  timeline.start(path.str(), 0);
  for (int i = 0; i < 10; ++i) {
    timeline.begin("t", "ALLREDUCE");
    timeline.end("t", "ALLREDUCE");  // nothing open on this row: ignored, not counted
  }
  timeline.instant("u", "X");
  CHECK(timeline.dropped_events() == 11);
  timeline.stop();
  auto events = read_trace(path.str());
  CHECK(events_of(events, "B").empty());
  CHECK(row_names(events).empty());
  auto instants = events_of(events, "i");
  REQUIRE(instants.size() == 1);
  CHECK(instants[0].at("name").text == "timeline events dropped (memory cap)");
  CHECK(instants[0].at("args").at("count").text == "11");
}

TEST_CASE("under name churn rows are forgotten, open spans kept, and the trace stays valid") {
  TempPath path("timeline_churn");
  // Idle limit 0: every row with nothing open may go once the cap is reached.
  Timeline timeline(nullptr, Timeline::kDefaultMemoryCapBytes, {100, std::chrono::milliseconds(0)});
  timeline.start(path.str(), 0);
  timeline.begin("held", "ALLREDUCE");  // open across the churn: never forgotten
  for (int i = 0; i < 20000; ++i) {
    const std::string name = "churn." + std::to_string(i % 5000);  // each name comes back
    timeline.begin(name, "QUEUE");
    timeline.end(name, "QUEUE");
    CHECK(timeline.row_count() <= 100);
  }
  timeline.end("held", "ALLREDUCE");
  timeline.stop();
  auto events = read_trace(path.str());
  CHECK(test::check_balanced(events) == 20001);
  size_t named = 0;
  for (const auto& event : events_of(events, "M")) {
    named += event.at("name").text == "process_name" && event.at("pid").number > 0 ? 1 : 0;
  }
  CHECK(named == 20001);  // a forgotten name comes back on a new row, named again
  auto ends = events_of(events, "E");
  CHECK(ends.back().at("name").text == "ALLREDUCE");
  CHECK(ends.back().at("pid").number == 1);  // "held" kept its row
}

TEST_CASE("with a long idle limit the least recently used rows go, down to half the cap") {
  TempPath path("timeline_lru");
  Timeline timeline(nullptr, Timeline::kDefaultMemoryCapBytes, {100, std::chrono::hours(1)});
  timeline.start(path.str(), 0);
  for (int i = 0; i < 1000; ++i) timeline.instant("n" + std::to_string(i), "X");
  CHECK(timeline.row_count() <= 100);
  CHECK(timeline.row_count() >= 50);
  timeline.instant("n999", "X");  // the most recent one is still known: no new row
  timeline.stop();
  auto events = read_trace(path.str());
  CHECK(row_names(events).size() == 1000);
  CHECK(events_of(events, "i").size() == 1001);
}

TEST_CASE("cycle marks are global instants, written only when asked for") {
  TempPath marked("timeline_marks");
  TempPath plain("timeline_no_marks");
  Timeline timeline;
  timeline.start(marked.str(), 0, true);
  CHECK(timeline.marking_cycles());
  timeline.mark("CYCLE_START");
  timeline.begin("allreduce.x", "ALLREDUCE");
  timeline.mark("CYCLE_START");
  timeline.start(plain.str(), 0);
  CHECK_FALSE(timeline.marking_cycles());
  timeline.mark("CYCLE_START");
  timeline.stop();
  auto marks = events_of(read_trace(marked.str()), "i");
  REQUIRE(marks.size() == 2);
  for (const auto& mark : marks) {
    CHECK(mark.at("name").text == "CYCLE_START");
    CHECK(mark.at("s").text == "g");
    CHECK(mark.at("pid").number == 0);
  }
  CHECK(events_of(read_trace(plain.str()), "i").empty());
}

TEST_CASE("events reach the file while the timeline runs, before stop") {
  TempPath path("timeline_live");
  Timeline timeline;
  timeline.start(path.str(), 0);
  timeline.begin("allreduce.live", "ALLREDUCE");
  const auto began = std::chrono::steady_clock::now();
  bool seen = false;
  while (!seen && std::chrono::steady_clock::now() - began < std::chrono::seconds(10)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    seen = test::read_file(path.str()).find("allreduce.live") != std::string::npos;
  }
  CHECK(seen);
  timeline.stop();
}

}  // namespace
}  // namespace runrun
