#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "common/errors.h"
#include "common/knobs.h"
#include "launcher/options/command_line.h"
#include "launcher/options/yaml_mapping.h"

using namespace runrun::launcher;
using Args = std::vector<std::string>;

namespace {

// A config file in the current directory, removed at the end of the test.
class ConfigFile {
 public:
  explicit ConfigFile(const std::string& content) { std::ofstream(path_) << content; }
  ~ConfigFile() { std::remove(path_.c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_ = "horovod_config_file_test.yaml";
};

ParsedCommandLine parse_all(const Args& args) {
  std::ostringstream out;
  return parse_command_line(args, {}, out);
}

std::string knob(const ParsedCommandLine& parsed, std::string_view name) {
  for (const auto& [variable, value] : parsed.options.knob_values) {
    if (variable == name) return value;
  }
  return "<unset>";
}

std::string error_of(const Args& args) {
  try {
    parse_all(args);
  } catch (const runrun::InvalidArgumentError& e) {
    return e.what();
  }
  return "";
}

std::string yaml_error(const std::string& content) {
  try {
    read_yaml_mapping(content, "f.yaml");
  } catch (const runrun::InvalidArgumentError& e) {
    return e.what();
  }
  return "";
}

// Horovod's test/single/data/config.test.yaml (horovod/horovod), every section set.
constexpr const char* kHorovodTestConfig = R"(controller: gloo

params:
  fusion_threshold_mb: 32
  cycle_time_ms: 10
  cache_capacity: 2048
  hierarchical_allreduce: true
  hierarchical_allgather: true

autotune:
  enabled: true
  log_file: 'horovod_autotune_log.txt'
  warmup_samples: 5
  steps_per_sample: 20
  bayes_opt_max_samples: 50
  gaussian_process_noise: 0.9

timeline:
  filename: 'horovod_timeline.json'
  mark_cycles: true

stall_check:
  enabled: true
  warning_time_seconds: 120
  shutdown_time_seconds: 240

library_options:
  mpi_threads_disable: true
  num_nccl_streams: 2
  ccl_bgt_affinity: 1
  gloo_timeout_seconds: 60

logging:
  level: INFO
  hide_timestamp: true
)";

}  // namespace

TEST_CASE("the YAML subset: sections of scalars, comments, quotes, booleans") {
  const auto entries = read_yaml_mapping(
      "---\n# a comment\ncontroller: gloo  # trailing\n\nparams:\n    a: 1\n    b: 'it''s # no'\n"
      "    c: \"x\\ty\"\n    d:\n    e: ~\nlast: null\n...\nignored: [after the end]\n",
      "f.yaml");
  REQUIRE(entries.size() == 7);
  CHECK(entries[0].section.empty());
  CHECK(entries[0].key == "controller");
  CHECK(entries[0].value == "gloo");
  CHECK(entries[1].section == "params");
  CHECK(entries[1].value == "1");
  CHECK(entries[1].line == 6);
  CHECK(entries[2].value == "it's # no");
  CHECK(entries[2].quoted);
  CHECK(entries[3].value == "x\ty");
  CHECK(entries[4].null);
  CHECK(entries[5].null);
  CHECK(entries[6].null);
  bool value = false;
  for (const char* word : {"true", "True", "TRUE", "yes", "On"}) {
    YamlEntry entry;
    entry.value = word;
    CHECK((yaml_bool(entry, &value) && value));
  }
  for (const char* word : {"false", "No", "OFF"}) {
    YamlEntry entry;
    entry.value = word;
    CHECK((yaml_bool(entry, &value) && !value));
  }
  YamlEntry quoted;
  quoted.value = "true";
  quoted.quoted = true;
  CHECK_FALSE(yaml_bool(quoted, &value));
  YamlEntry odd;
  odd.value = "tRUE";
  CHECK_FALSE(yaml_bool(odd, &value));
}

TEST_CASE("YAML outside the subset is an error naming the file, the line and why") {
  CHECK_THAT(yaml_error("params:\n  a: [1, 2]\n"),
             Catch::Contains("f.yaml line 2 '  a: [1, 2]'") && Catch::Contains("a list"));
  CHECK_THAT(yaml_error("params:\n  - a\n"), Catch::Contains("not a 'key: value' line"));
  CHECK_THAT(yaml_error("params:\n  a:\n    b: 1\n"), Catch::Contains("nesting deeper"));
  CHECK_THAT(yaml_error("params:\n    a: 1\n  b: 2\n"), Catch::Contains("indentation differs"));
  CHECK_THAT(yaml_error("a: 1\n  b: 2\n"), Catch::Contains("outside a section"));
  CHECK_THAT(yaml_error("params:\n\ta: 1\n"), Catch::Contains("tab"));
  CHECK_THAT(yaml_error("a: 'open\n"), Catch::Contains("no closing '"));
  CHECK_THAT(yaml_error("a: &anchor 1\n"), Catch::Contains("anchor"));
  CHECK_THAT(yaml_error("a: b: c\n"), Catch::Contains("': '"));
  CHECK_THAT(yaml_error("a:b\n"), Catch::Contains("not a 'key: value' line"));
}

TEST_CASE("option --config-file: Horovod's settings become the flags of the same meaning") {
  namespace k = runrun::knobs;
  const ConfigFile file(kHorovodTestConfig);
  const auto parsed = parse_all({"-np", "2", "--config-file", file.path(), "x"});
  const LaunchOptions& options = parsed.options;
  CHECK(options.controller == Controller::kGloo);
  CHECK(knob(parsed, k::kFusionThreshold.env_name) == "33554432");
  CHECK(knob(parsed, k::kCycleTimeMs.env_name) == "10");
  CHECK(knob(parsed, k::kCacheCapacity.env_name) == "2048");
  CHECK(knob(parsed, k::kHierarchicalAllreduce.env_name) == "1");
  CHECK(knob(parsed, k::kAutotune.env_name) == "1");
  CHECK(knob(parsed, k::kAutotuneLog.env_name) == "horovod_autotune_log.txt");
  CHECK(knob(parsed, k::kAutotuneWarmupSamples.env_name) == "5");
  CHECK(knob(parsed, k::kAutotuneStepsPerSample.env_name) == "20");
  CHECK(knob(parsed, k::kTimeline.env_name) == "horovod_timeline.json");
  CHECK(knob(parsed, k::kStallCheckTime.env_name) == "120");
  CHECK(knob(parsed, k::kStallShutdownTime.env_name) == "240");
  CHECK(knob(parsed, k::kCollectiveTimeout.env_name) == "60");
  CHECK(knob(parsed, k::kLogLevel.env_name) == "info");
  // Settings of features runrun lacks are said once each; keys Horovod does not read too.
  std::string notices;
  for (const auto& notice : parsed.notices) notices += notice + "\n";
  CHECK(knob(parsed, k::kTimelineMarkCycles.env_name) == "1");
  for (const char* said :
       {"--hierarchical-allgather accepted", "--mpi-threads-disable accepted",
        "--num-nccl-streams 2 accepted", "--autotune-bayes-opt-max-samples accepted",
        "--autotune-gaussian-process-noise accepted",
        "'library_options.ccl_bgt_affinity' is not a setting horovodrun reads",
        "'logging.hide_timestamp' is not a setting horovodrun reads"}) {
    CHECK_THAT(notices, Catch::Contains(said));
  }
  CHECK(parsed.notices.size() == 7);
}

TEST_CASE("option --config-file: the command line wins wherever it stands, as in horovodrun") {
  namespace k = runrun::knobs;
  const ConfigFile file(kHorovodTestConfig);
  const auto parsed =
      parse_all({"--fusion-threshold-mb", "8", "-np", "2", "--config-file", file.path(), "--mpi",
                 "--no-hierarchical-allreduce", "--no-stall-check", "--log-level", "error", "x"});
  CHECK(parsed.options.controller == Controller::kMpi);
  CHECK(knob(parsed, k::kFusionThreshold.env_name) == "8388608");
  CHECK(knob(parsed, k::kHierarchicalAllreduce.env_name) == "0");
  CHECK(knob(parsed, k::kStallCheckTime.env_name) == "0");  // disabled: the times do not count
  CHECK(knob(parsed, k::kLogLevel.env_name) == "error");
  CHECK(knob(parsed, k::kCycleTimeMs.env_name) == "10");  // not on the command line: the file's
  // --no-autotune: the autotune section counts for nothing.
  const auto no_autotune =
      parse_all({"-np", "2", "--config-file", file.path(), "--no-autotune", "x"});
  CHECK(knob(no_autotune, k::kAutotune.env_name) == "0");
  CHECK(knob(no_autotune, k::kAutotuneLog.env_name) == "<unset>");
}

TEST_CASE("option --config-file: autotune values count only while autotuning is on") {
  namespace k = runrun::knobs;
  // Horovod's config.default.yaml: autotune off, and keys horovodrun does not read.
  const ConfigFile file(
      "controller: gloo\nparams:\n  fusion_threshold_mb: 64\n  hierarchical_allreduce: false\n"
      "autotune:\n  enabled: false\n  log_file: 'horovod_autotune_log.txt'\n"
      "  cycles_per_sample: 10\ntimeline:\n  enabled: false\n  mark_cycles: false\n");
  const auto off = parse_all({"-np", "2", "--config-file", file.path(), "x"});
  CHECK(knob(off, k::kAutotune.env_name) == "<unset>");
  CHECK(knob(off, k::kAutotuneLog.env_name) == "<unset>");
  CHECK(knob(off, k::kHierarchicalAllreduce.env_name) == "0");
  CHECK(off.notices.size() == 2);  // autotune.cycles_per_sample, timeline.enabled
  // Autotuning on by the command line: the file's autotune values apply.
  const auto on = parse_all({"-np", "2", "--autotune", "--config-file", file.path(), "x"});
  CHECK(knob(on, k::kAutotune.env_name) == "1");
  CHECK(knob(on, k::kAutotuneLog.env_name) == "horovod_autotune_log.txt");
}

TEST_CASE("option --config-file: a value of the wrong kind, or no file, names it") {
  {
    const ConfigFile file("params:\n  fusion_threshold_mb: big\n");
    CHECK_THAT(error_of({"-np", "2", "--config-file", file.path(), "x"}),
               Catch::Contains("--config-file horovod_config_file_test.yaml line 2: "
                               "params.fusion_threshold_mb 'big' is not a whole number"));
  }
  {
    const ConfigFile file("stall_check:\n  enabled: sometimes\n");
    CHECK_THAT(error_of({"-np", "2", "--config-file", file.path(), "x"}),
               Catch::Contains("stall_check.enabled 'sometimes' is not true or false"));
  }
  {
    const ConfigFile file("controller: jsrun\n");
    CHECK_THAT(error_of({"-np", "2", "--config-file", file.path(), "x"}),
               Catch::Contains("controller 'jsrun' is not gloo or mpi"));
  }
  CHECK_THAT(error_of({"-np", "2", "--config-file", "/nonexistent/c.yaml", "x"}),
             Catch::Contains("--config-file '/nonexistent/c.yaml' cannot be read"));
}
