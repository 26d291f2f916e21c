// Config: defaults, environment, overrides, malformed values; docs list every knob.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <utility>
#include <vector>

#include "common/horovod_env.h"
#include "common/knobs.h"
#include "core/runtime/config.h"

using namespace runrun;

TEST_CASE("config reads defaults, then the environment, then overrides", "[config]") {
  unsetenv("RUNRUN_FUSION_THRESHOLD");
  CHECK(Config::load().fusion_threshold == 4u << 20);
  setenv("RUNRUN_FUSION_THRESHOLD", "1024", 1);
  CHECK(Config::load().fusion_threshold == 1024);
  CHECK(Config::load({{"RUNRUN_FUSION_THRESHOLD", "7"}}).fusion_threshold == 7);
  unsetenv("RUNRUN_FUSION_THRESHOLD");
  CHECK(Config::load({{"RUNRUN_CYCLE_TIME_MS", "2.5"}}).cycle_time.count() == 2500);
  CHECK(Config::load().burst_gap.count() == 50);
  CHECK(Config::load({{"RUNRUN_BURST_GAP_US", "0"}}).burst_gap.count() == 0);
}

TEST_CASE("config: a stall ends the job by default, in minutes (issue 36, point 1)", "[config]") {
  unsetenv("RUNRUN_STALL_SHUTDOWN_TIME");
  unsetenv("HOROVOD_STALL_SHUTDOWN_TIME_SECONDS");
  const Config c = Config::load();
  CHECK(c.stall_shutdown_time.count() == 600);
  CHECK(c.stall_check_time < c.stall_shutdown_time);  // warned first, with the time left
  CHECK(Config::load({{"RUNRUN_STALL_SHUTDOWN_TIME", "0"}}).stall_shutdown_time.count() == 0);
}

TEST_CASE("config rejects malformed values and unknown names", "[config]") {
  CHECK_THROWS_WITH(Config::load({{"RUNRUN_CACHE_CAPACITY", "lots"}}),
                    Catch::Contains("RUNRUN_CACHE_CAPACITY='lots' is not a number"));
  CHECK_THROWS_WITH(Config::load({{"RUNRUN_CYCLE_TIME_MS", "-1"}}),
                    Catch::Contains("RUNRUN_CYCLE_TIME_MS"));
  CHECK_THROWS_WITH(Config::load({{"RUNRUN_BURST_GAP_US", "-5"}}),
                    Catch::Contains("RUNRUN_BURST_GAP_US='-5' is not a number >= 0"));
  CHECK_THROWS_WITH(Config::load({{"RUNRUN_NO_SUCH", "1"}}),
                    Catch::Contains("unknown runtime setting 'RUNRUN_NO_SUCH'"));
}

TEST_CASE("config reads Horovod's variables when the RUNRUN_ ones are unset", "[config]") {
  // A Horovod job's environment keeps working (common/horovod_env.h); RUNRUN_ wins over it.
  setenv("HOROVOD_FUSION_THRESHOLD", "2048", 1);
  setenv("HOROVOD_CYCLE_TIME", "3.5", 1);
  setenv("HOROVOD_LOG_LEVEL", "WARNING", 1);
  setenv("HOROVOD_TIMELINE", "DYNAMIC", 1);
  setenv("HOROVOD_STALL_CHECK_TIME_SECONDS", "7", 1);
  setenv("HOROVOD_CACHE_CAPACITY", "9", 1);
  setenv("RUNRUN_CACHE_CAPACITY", "11", 1);
  Config c = Config::load();
  CHECK(c.fusion_threshold == 2048);
  CHECK(c.cycle_time.count() == 3500);
  CHECK(c.log_level == "warn");
  CHECK(c.timeline_path.empty());
  CHECK(c.stall_check_time.count() == 7);
  CHECK(c.cache_capacity == 11);
  setenv("HOROVOD_STALL_SHUTDOWN_TIME_SECONDS", "30", 1);
  CHECK(Config::load().stall_shutdown_time.count() == 30);
  setenv("HOROVOD_STALL_CHECK_DISABLE", "1", 1);  // Horovod's: neither warning nor shutdown
  CHECK(Config::load().stall_check_time.count() == 0);
  CHECK(Config::load().stall_shutdown_time.count() == 0);
  setenv("HOROVOD_STALL_CHECK_DISABLE", "true", 1);  // strtol("true") is 0: not disabled
  CHECK(Config::load().stall_check_time.count() == 7);
  // Horovod's switches are on when strtol(value) > 0.
  for (const auto& [value, on] : std::vector<std::pair<const char*, bool>>{
           {"1", true}, {"2", true}, {"0", false}, {"", false}, {"true", false}}) {
    INFO(value);
    setenv("HOROVOD_AUTOTUNE", value, 1);
    setenv("HOROVOD_HIERARCHICAL_ALLREDUCE", value, 1);
    CHECK(Config::load().autotune.enabled == on);
    CHECK(Config::load().hierarchical_allreduce == on);
  }
  unsetenv("HOROVOD_AUTOTUNE");
  unsetenv("HOROVOD_HIERARCHICAL_ALLREDUCE");
  setenv("HOROVOD_LOG_LEVEL", "FATAL", 1);
  CHECK(Config::load().log_level == "critical");
  setenv("HOROVOD_LOG_LEVEL", "bogus", 1);
  CHECK_THROWS_WITH(Config::load(),
                    Catch::Contains("HOROVOD_LOG_LEVEL (read as RUNRUN_LOG_LEVEL)='bogus' is not "
                                    "a log level"));
  setenv("HOROVOD_LOG_LEVEL", "FATAL", 1);
  setenv("HOROVOD_FUSION_THRESHOLD", "big", 1);
  CHECK_THROWS_WITH(Config::load(), Catch::Contains("HOROVOD_FUSION_THRESHOLD (read as "
                                                    "RUNRUN_FUSION_THRESHOLD)='big'"));
  for (const char* name :
       {"HOROVOD_FUSION_THRESHOLD", "HOROVOD_CYCLE_TIME", "HOROVOD_LOG_LEVEL", "HOROVOD_TIMELINE",
        "HOROVOD_STALL_CHECK_TIME_SECONDS", "HOROVOD_CACHE_CAPACITY", "RUNRUN_CACHE_CAPACITY",
        "HOROVOD_STALL_CHECK_DISABLE", "HOROVOD_STALL_SHUTDOWN_TIME_SECONDS"}) {
    unsetenv(name);
  }
}

TEST_CASE("docs/configuration.md lists every knob", "[config]") {
  std::ifstream doc(std::string(RUNRUN_SOURCE_DIR) + "/docs/configuration.md");
  REQUIRE(doc.good());
  std::stringstream text;
  text << doc.rdbuf();
  for (const Knob& knob : kAllKnobs) {
    INFO(knob.env_name);
    CHECK(text.str().find(std::string(knob.env_name)) != std::string::npos);
  }
  for (const HorovodAlias& alias : kHorovodAliases) {  // and every Horovod variable read
    INFO(alias.horovod_name);
    CHECK(text.str().find("`" + std::string(alias.horovod_name) + "`") != std::string::npos);
  }
}
