#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "launcher/processes/output_router.h"

using namespace runrun::launcher;

namespace {

std::string read_stream(std::FILE* file) {
  std::fflush(file);
  std::rewind(file);
  std::string text;
  char buffer[4096];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof(buffer), file)) > 0) text.append(buffer, n);
  return text;
}

std::string read_file(const std::string& path) {
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

}  // namespace

TEST_CASE("tags are rewritten, markers taken out, partial reads joined") {
  std::FILE* out = std::tmpfile();
  std::FILE* err = std::tmpfile();
  OutputRouter router(out, err, "", 2);
  router.feed(false, "[1,0]<stdout>:hel");
  router.feed(false, "lo\n[1,1]<stdout>:world\n");
  std::string marker = format_rank_event({RankEvent::Kind::kStarted, 1, 0});
  router.feed(true, "[1,1]<stderr>:" + marker);
  router.feed(true, "[1,0]<stderr>:50%" + format_rank_event({RankEvent::Kind::kExited, 0, 3}));
  router.feed(true, "mpirun says something\n[1,1]<stderr>:no newline");
  CHECK(router.take_events() == std::vector<RankEvent>{{RankEvent::Kind::kStarted, 1, 0},
                                                       {RankEvent::Kind::kExited, 0, 3}});
  router.finish();
  CHECK(read_stream(out) == "[0]<stdout>:hello\n[1]<stdout>:world\n");
  CHECK(read_stream(err) == "[0]<stderr>:50%\nmpirun says something\n[1]<stderr>:no newline\n");
  CHECK(router.take_events().empty());
  std::fclose(out);
  std::fclose(err);
}

TEST_CASE(
    "a rank's own pipes (runrun --gloo): untagged bytes, several lines per read, markers "
    "and a '[' that is not a tag") {
  std::FILE* out = std::tmpfile();
  std::FILE* err = std::tmpfile();
  OutputRouter router(out, err, "", 2);
  router.feed_rank(1, false, "[1,0]<stdout>:not a tag\nsecond ");
  router.feed_rank(0, false, "zero\n");
  router.feed_rank(1, false, "line\nthird");
  router.feed_rank(1, true, "oops " + format_rank_event({RankEvent::Kind::kExited, 1, 4}));
  CHECK(router.take_events() == std::vector<RankEvent>{{RankEvent::Kind::kExited, 1, 4}});
  router.finish();
  CHECK(read_stream(out) ==
        "[1]<stdout>:[1,0]<stdout>:not a tag\n[0]<stdout>:zero\n[1]<stdout>:second line\n"
        "[1]<stdout>:third\n");
  CHECK(read_stream(err) == "[1]<stderr>:oops \n");
  std::fclose(out);
  std::fclose(err);
}

TEST_CASE("option --output-filename: per-rank files, zero-padded, created for every rank") {
  char dir_template[] = "/tmp/runrun_router_XXXXXX";
  const std::string dir = mkdtemp(dir_template);
  std::FILE* out = std::tmpfile();
  std::FILE* err = std::tmpfile();
  {
    OutputRouter router(out, err, dir, 12);
    router.feed(false, "[1,3]<stdout>:three\n[1,11]<stderr>:eleven\n");
    router.feed(true, "[1,3]<stderr>:" + format_rank_event({RankEvent::Kind::kStarted, 3, 0}));
    router.finish();
  }
  CHECK(read_file(dir + "/rank.03/stdout") == "three\n");
  CHECK(read_file(dir + "/rank.03/stderr").empty());
  CHECK(read_file(dir + "/rank.11/stderr") == "eleven\n");
  struct stat info{};
  CHECK(stat((dir + "/rank.00/stdout").c_str(), &info) == 0);
  CHECK(read_stream(out) == "[3]<stdout>:three\n");
  std::fclose(out);
  std::fclose(err);
  REQUIRE(std::system(("rm -rf '" + dir + "'").c_str()) == 0);
}

TEST_CASE("pieces of one rank's line are joined even when other ranks interleave") {
  std::FILE* out = std::tmpfile();
  std::FILE* err = std::tmpfile();
  OutputRouter router(out, err, "", 2);
  router.feed(false, "[1,1]<stdout>:py[1,0]<stdout>:a\n[1,1]<stdout>: [1,1]<stdout>:1 [x]\n");
  router.feed(false, "[1,0]<std");
  router.feed(false, "out>:split tag\n[not a tag] text\n");
  router.finish();
  CHECK(read_stream(out) ==
        "[0]<stdout>:a\n[1]<stdout>:py 1 [x]\n[0]<stdout>:split tag\n[not a tag] text\n");
  std::fclose(out);
  std::fclose(err);
}

TEST_CASE("mpirun's job-end boxes are held back, other boxes shown, held ones released on ask") {
  const std::string rule(74, '-');
  const std::string job_end = rule +
                              "\nPrimary job  terminated normally, but 1 process returned\n"
                              "a non-zero exit code. Per user-direction, the job has been "
                              "aborted.\n" +
                              rule + "\n";
  const std::string other =
      rule + "\nORTE was unable to reliably start one or more daemons.\n" + rule + "\n";
  std::FILE* out = std::tmpfile();
  std::FILE* err = std::tmpfile();
  OutputRouter router(out, err, "", 2);
  router.feed(true, "[1,0]<stderr>:before\n" + job_end.substr(0, 30));
  router.feed(true, job_end.substr(30) + other + "[1,1]<stderr>:after\n");
  router.finish();
  CHECK(read_stream(err) == "[0]<stderr>:before\n" + other + "[1]<stderr>:after\n");
  router.release_held_boxes();
  CHECK(read_stream(err) == "[0]<stderr>:before\n" + other + "[1]<stderr>:after\n" + job_end);

  std::FILE* verbose_err = std::tmpfile();
  OutputRouter verbose(out, verbose_err, "", 2, /*show_job_end_boxes=*/true);
  verbose.feed(true, job_end);
  verbose.finish();
  CHECK(read_stream(verbose_err) == job_end);
  std::fclose(out);
  std::fclose(err);
  std::fclose(verbose_err);
}

TEST_CASE(
    "option --prefix-output-with-timestamp: rank lines begin with the time, as horovodrun's") {
  char dir_template[] = "/tmp/runrun_router_XXXXXX";
  const std::string dir = mkdtemp(dir_template);
  std::FILE* out = std::tmpfile();
  std::FILE* err = std::tmpfile();
  {
    OutputRouter router(out, err, dir, 2, false, true);
    router.feed(false, "[1,1]<stdout>:one\nmpirun's own line\n");
    router.feed_rank(0, true, "zero\n");
    router.finish();
  }
  // asctime's form: "Tue Mar  3 14:05:09 2026", then the tag.
  const std::string time =
      "[A-Z][a-z]{2} [A-Z][a-z]{2} [ 1-3][0-9] [0-9]{2}:[0-9]{2}:[0-9]{2} "
      "[0-9]{4}";
  CHECK_THAT(read_stream(out), Catch::Matches(time + "\\[1\\]<stdout>:one\nmpirun's own line\n"));
  CHECK_THAT(read_stream(err), Catch::Matches(time + "\\[0\\]<stderr>:zero\n"));
  CHECK_THAT(read_file(dir + "/rank.1/stdout"), Catch::Matches(time + "one\n"));
  std::fclose(out);
  std::fclose(err);
  REQUIRE(std::system(("rm -rf '" + dir + "'").c_str()) == 0);
}

TEST_CASE(
    "srun --label output (a Gloo job in a Slurm allocation): labels become tags, lines "
    "split across reads stay whole, srun's own lines stay untagged") {
  std::FILE* out = std::tmpfile();
  std::FILE* err = std::tmpfile();
  OutputRouter router(out, err, "", 12, false, false, /*srun_labels=*/true);
  router.feed(false, " 0: hel");
  router.feed(false, "lo [1,1]<stdout>:x\n11: eleven\n 3");
  router.feed(false, ": three\n");
  router.feed(true, "srun: error: task 3 exited\n 3: " +
                        format_rank_event({RankEvent::Kind::kExited, 3, 1}));
  CHECK(router.take_events() == std::vector<RankEvent>{{RankEvent::Kind::kExited, 3, 1}});
  router.finish();
  CHECK(read_stream(out) ==
        "[0]<stdout>:hello [1,1]<stdout>:x\n[11]<stdout>:eleven\n[3]<stdout>:three\n");
  CHECK(read_stream(err) == "srun: error: task 3 exited\n");
  std::fclose(out);
  std::fclose(err);
}

TEST_CASE("mpirun's lost-daemon box and its crash report are held back and kept apart") {
  const std::string rule(74, '-');
  const std::string lost = rule +
                           "\nORTE has lost communication with a remote daemon.\n\n"
                           "  HNP daemon   : [[1,0],0] on node vm\n"
                           "  Remote daemon: [[1,0],2] on node ns2\n" +
                           rule + "\n";
  const std::string crash =
      "[vm:15] *** Process received signal ***\n"
      "[vm:15] Signal: Segmentation fault (11)\n"
      "[vm:15] [ 1] libpmix.so.2(PMIx_Finalize+0x703)\n"
      "[vm:15] *** End of error message ***\n";
  std::FILE* out = std::tmpfile();
  std::FILE* err = std::tmpfile();
  OutputRouter router(out, err, "", 4);
  router.feed(true, lost + "[1,0]<stderr>:rank line\n" + crash.substr(0, 50));
  router.feed(true, crash.substr(50) + "after\n");
  router.finish();
  CHECK(read_stream(err) == "[0]<stderr>:rank line\nafter\n");
  CHECK(router.lost_daemon_nodes() == std::vector<std::string>{"ns2"});
  CHECK(router.crash_report().size() == 4);
  router.release_crash_report();
  CHECK(read_stream(err) == "[0]<stderr>:rank line\nafter\n" + crash);
  std::fclose(out);
  std::fclose(err);
}
