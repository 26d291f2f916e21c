#include <catch2/catch.hpp>

#include <algorithm>

#include "common/errors.h"
#include "launcher/elastic/elastic_hosts.h"
#include "launcher/elastic/elastic_options.h"

using namespace runrun::launcher;

namespace {
std::vector<int> ids(const std::vector<PlannedWorker>& workers) {
  std::vector<int> out;
  for (const auto& worker : workers) out.push_back(worker.id);
  return out;
}
}  // namespace

TEST_CASE("elastic host table: discovery updates keep first-seen order and report changes") {
  ElasticHostTable table;
  CHECK(table.update({{"a", 2}, {"b", 2}}));
  CHECK_FALSE(table.update({{"b", 2}, {"a", 2}}));
  CHECK(table.update({{"b", 3}}));  // a gone, b grew
  REQUIRE(table.hosts().size() == 2);
  CHECK(table.at(0).name == "a");
  CHECK_FALSE(table.at(0).listed);
  CHECK(table.at(1).slots == 3);
  CHECK(table.update({{"c", 1}, {"a", 2}, {"b", 3}}));
  CHECK(table.at(2).name == "c");
  CHECK(table.at(0).listed);
}

TEST_CASE("elastic host table: a failing host gets a doubling cooldown") {
  ElasticHostTable table;
  table.update({{"a", 2}});
  auto now = ElasticClock::now();
  CHECK(table.accepts_new_workers(0, now));
  CHECK(table.record_failure(0, now) == kBlacklistBaseCooldown);
  CHECK_FALSE(table.accepts_new_workers(0, now + kBlacklistBaseCooldown / 2));
  CHECK(table.accepts_new_workers(0, now + kBlacklistBaseCooldown));
  now += kBlacklistBaseCooldown;
  CHECK(table.record_failure(0, now) == 2 * kBlacklistBaseCooldown);
  for (int i = 0; i < 20; ++i) {
    now += kBlacklistMaxCooldown;
    table.record_failure(0, now);
  }
  now += kBlacklistMaxCooldown;
  CHECK(table.record_failure(0, now) == kBlacklistMaxCooldown);
}

TEST_CASE(
    "elastic host table: the cooldown range bounds the cooldown, a failure during a "
    "cooldown counts once") {
  using std::chrono::seconds;
  ElasticHostTable table(CooldownRange{seconds(3), seconds(10)});
  table.update({{"a", 2}, {"b", 1}});
  auto now = ElasticClock::now();
  CHECK(table.record_failure(0, now) == seconds(3));
  // The host's second worker fails a moment later: the same lost host, no second count.
  CHECK(table.record_failure(0, now + seconds(1)) == seconds(2));
  CHECK(table.accepts_new_workers(0, now + seconds(3)));
  CHECK(table.accepts_new_workers(1, now));  // other hosts are not affected
  now += seconds(3);
  CHECK(table.record_failure(0, now) == seconds(6));
  now += seconds(6);
  CHECK(table.record_failure(0, now) == seconds(10));  // 12 s, bounded by MAX
  now += seconds(10);
  CHECK(table.record_failure(0, now) == seconds(10));
}

TEST_CASE("membership plan: survivors stay, free slots fill up to max-np, gone hosts stop") {
  ElasticHostTable table;
  table.update({{"a", 2}, {"b", 2}});
  const auto now = ElasticClock::now();
  // worker 1 on a died: with a script (allow_new) a new worker fills a's free slot.
  auto plan = plan_membership(table, {{0, 0}, {2, 1}, {3, 1}}, 8, true, now);
  CHECK(plan.stop.empty());
  CHECK(plan.start_on == std::vector<int>{0});
  // Without a script the job goes on with its survivors.
  plan = plan_membership(table, {{0, 0}, {2, 1}, {3, 1}}, 8, false, now);
  CHECK(plan.start_on.empty());
  // A host in cooldown after a failure leaves the job, as Horovod's blacklisted host: its
  // surviving worker stops, and it gets no new worker (issue 39, point 14).
  table.record_failure(0, now);
  plan = plan_membership(table, {{0, 0}, {2, 1}, {3, 1}}, 8, true, now);
  CHECK(plan.stop == std::vector<int>{0});
  CHECK(plan.start_on.empty());
  // --keep-failed-hosts: the survivor stays, still no new worker there.
  plan = plan_membership(table, {{0, 0}, {2, 1}, {3, 1}}, 8, true, now, true);
  CHECK(plan.stop.empty());
  CHECK(plan.start_on.empty());
  // After the cooldown the host takes workers again.
  plan = plan_membership(table, {{2, 1}, {3, 1}}, 8, true, now + std::chrono::seconds(11));
  CHECK(plan.start_on == std::vector<int>{0, 0});
  // max-np bounds the new workers; the newest stop first when above it.
  table.update({{"a", 2}, {"b", 2}, {"c", 4}});
  plan = plan_membership(table, {{0, 0}, {2, 1}, {3, 1}}, 5, true, now, true);
  CHECK(plan.start_on == std::vector<int>{2, 2});
  plan = plan_membership(table, {{0, 0}, {2, 1}, {3, 1}}, 2, true, now, true);
  CHECK(plan.stop == std::vector<int>{3});
  // b leaves the discovery: its workers stop; fewer slots stop the newest of a host.
  table.update({{"a", 1}});
  plan = plan_membership(table, {{0, 0}, {1, 0}, {2, 1}, {3, 1}}, 8, true, now, true);
  std::sort(plan.stop.begin(), plan.stop.end());
  CHECK(plan.stop == std::vector<int>{1, 2, 3});
}

TEST_CASE("rank order: rank 0 is the oldest worker, a host's workers are together") {
  CHECK(ids(rank_order({{5, 0}, {1, 1}, {2, 1}, {4, 0}, {7, 2}})) ==
        std::vector<int>{1, 2, 4, 5, 7});
  CHECK(ids(rank_order({{9, 0}, {3, 1}})) == std::vector<int>{3, 9});
}

TEST_CASE("elastic options: defaults and the checks between -np, --min-np and --max-np") {
  auto options = validate_elastic(4, 2, 0, "", 600, -1, 4);
  CHECK(options.enabled);
  CHECK(options.initial_np == 4);
  CHECK(options.min_np == 2);
  CHECK(options.max_np == 4);  // the slots of -H
  options = validate_elastic(0, 2, 8, "./discover.sh", 60, 3, 0);
  CHECK(options.initial_np == 2);
  CHECK(options.max_np == 8);
  CHECK(options.reset_limit == 3);
  CHECK_THROWS_WITH(validate_elastic(2, 3, 0, "", 600, -1, 4),
                    Catch::Contains("--min-np 3 is above -np 2"));
  CHECK_THROWS_WITH(validate_elastic(4, 2, 3, "", 600, -1, 4),
                    Catch::Contains("-np 4 is above --max-np 3"));
  CHECK_THROWS_WITH(validate_elastic(4, 2, 0, "", 0, -1, 4),
                    Catch::Contains("--elastic-timeout must be at least 1"));
}

#include <sstream>

#include "launcher/options/command_line.h"

TEST_CASE("elastic flags on the command line: Gloo implied, conflicts refused") {
  std::ostringstream out;
  auto parsed = parse_command_line(
      {"-np", "4", "--min-np", "2", "-H", "a:2,b:2", "--reset-limit", "3", "python", "train.py"},
      {}, out);
  CHECK(parsed.options.elastic.enabled);
  CHECK(parsed.options.controller == Controller::kGloo);
  CHECK(parsed.options.elastic.max_np == 4);
  CHECK(parsed.options.elastic.reset_limit == 3);
  CHECK(parsed.options.num_proc == 4);
  parsed = parse_command_line({"--min-np", "2", "python"}, {}, out);
  CHECK(parsed.options.num_proc == 2);
  CHECK(parsed.options.hosts == std::vector<HostSlots>{{"localhost", 2}});
  parsed = parse_command_line({"-np", "2", "python"}, {}, out);
  CHECK_FALSE(parsed.options.elastic.enabled);
  CHECK_THROWS_WITH(parse_command_line({"--mpi", "--min-np", "2", "python"}, {}, out),
                    Catch::Contains("runs over Gloo only"));
  CHECK_THROWS_WITH(
      parse_command_line({"--host-discovery-script", "./d.sh", "-H", "a:2", "python"}, {}, out),
      Catch::Contains("--host-discovery-script gives the hosts: drop -H"));
}

TEST_CASE("elastic flags: the blacklist cooldown range takes MIN MAX, checked, default 10 600") {
  std::ostringstream out;
  auto parsed = parse_command_line(
      {"--min-np", "2", "--blacklist-cooldown-range", "1", "5", "python", "train.py"}, {}, out);
  CHECK(parsed.options.elastic.cooldown_min_s == 1);
  CHECK(parsed.options.elastic.cooldown_max_s == 5);
  CHECK(parsed.options.command == std::vector<std::string>{"python", "train.py"});
  parsed = parse_command_line({"--min-np", "2", "python"}, {}, out);
  CHECK(parsed.options.elastic.cooldown_min_s == 10);
  CHECK(parsed.options.elastic.cooldown_max_s == 600);
  CHECK_THROWS_WITH(
      parse_command_line({"--min-np", "2", "--blacklist-cooldown-range", "5", "1", "python"}, {},
                         out),
      Catch::Contains("1 <= MIN <= MAX, got 5 1"));
  CHECK_THROWS_WITH(
      parse_command_line({"-np", "2", "--blacklist-cooldown-range", "1", "5", "python"}, {}, out),
      Catch::Contains("is for elastic jobs"));
  CHECK_FALSE(
      parse_command_line({"--min-np", "2", "python"}, {}, out).options.elastic.keep_failed_hosts);
  CHECK(parse_command_line({"--min-np", "2", "--keep-failed-hosts", "python"}, {}, out)
            .options.elastic.keep_failed_hosts);
  CHECK_THROWS_WITH(parse_command_line({"-np", "2", "--keep-failed-hosts", "python"}, {}, out),
                    Catch::Contains("--keep-failed-hosts is for elastic jobs"));
}
