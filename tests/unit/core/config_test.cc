// Config: defaults, environment, overrides, malformed values; docs list every knob.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "common/knobs.h"
#include "core/config.h"

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

TEST_CASE("docs/configuration.md lists every knob", "[config]") {
  std::ifstream doc(std::string(RUNRUN_SOURCE_DIR) + "/docs/configuration.md");
  REQUIRE(doc.good());
  std::stringstream text;
  text << doc.rdbuf();
  for (const Knob& knob : kAllKnobs) {
    INFO(knob.env_name);
    CHECK(text.str().find(std::string(knob.env_name)) != std::string::npos);
  }
}
