// Server and clients over 127.0.0.1: set/get/wait/add/check/delete across client threads,
// a wait that times out, generations over the wire.
#include <catch2/catch.hpp>

#include <thread>
#include <vector>

#include "common/errors.h"
#include "rendezvous/elastic_keys.h"
#include "rendezvous_fixture.h"

using namespace runrun::rendezvous;
using namespace std::chrono_literals;
using runrun::rendezvous::test::TestServer;

TEST_CASE("ranks exchange addresses through the store: set, wait, get, add", "[rendezvous]") {
  TestServer server;
  constexpr int kRanks = 6;
  std::vector<std::thread> ranks;
  std::vector<std::string> failures(kRanks);
  std::vector<int64_t> tickets(kRanks);
  for (int rank = 0; rank < kRanks; ++rank) {
    ranks.emplace_back([&, rank] {
      try {
        auto client = server.client();
        client->set(0, "addr/" + std::to_string(rank), "host-" + std::to_string(rank));
        tickets[rank] = client->add(0, "arrived", 1);
        std::vector<std::string> keys;
        for (int peer = 0; peer < kRanks; ++peer) keys.push_back("addr/" + std::to_string(peer));
        client->wait(0, keys, 20s);
        for (int peer = 0; peer < kRanks; ++peer) {
          if (client->get(0, keys[peer]) != "host-" + std::to_string(peer)) {
            failures[rank] = "wrong value for " + keys[peer];
          }
        }
        if (!client->check(0, keys)) failures[rank] = "check says a key is missing";
      } catch (const std::exception& error) {
        failures[rank] = error.what();
      }
    });
  }
  for (auto& thread : ranks) thread.join();
  for (const auto& failure : failures) CHECK(failure.empty());
  std::sort(tickets.begin(), tickets.end());
  for (int rank = 0; rank < kRanks; ++rank) CHECK(tickets[rank] == rank + 1);
  CHECK(server.client()->get(0, "arrived") == std::to_string(kRanks));
}

TEST_CASE("a wait returns as soon as another client sets the key", "[rendezvous]") {
  TestServer server;
  auto waiter = server.client();
  std::thread setter([&] {
    std::this_thread::sleep_for(100ms);
    server.client()->set(0, "late", "here");
  });
  waiter->wait(0, {"late"}, 20s);
  setter.join();
  CHECK(waiter->get(0, "late") == "here");
}

TEST_CASE("a wait for keys nobody sets times out naming them", "[rendezvous]") {
  TestServer server;
  auto client = server.client();
  client->set(0, "present", "1");
  try {
    client->wait(0, {"present", "absent/1", "absent/2"}, 200ms);
    FAIL("the wait returned");
  } catch (const runrun::TimeoutError& error) {
    const std::string text = error.what();
    CHECK(text.find("wait") != std::string::npos);
    CHECK(text.find("127.0.0.1:" + std::to_string(server.server.port())) != std::string::npos);
    CHECK(text.find("'absent/1', 'absent/2'") != std::string::npos);
    CHECK(text.find("'present'") == std::string::npos);
  }
  // The connection is still usable after a server-side timeout.
  CHECK(client->get(0, "present") == "1");
}

TEST_CASE("a wait in an elastic generation the driver replaced ends at once", "[rendezvous]") {
  // A member of generation 1 left before setting its keys; the driver publishes generation 2:
  // the waiters of generation 1 go on now (and join 2), not after their whole timeout.
  TestServer server;
  server.client()->set(kElasticControlGeneration, kElasticGenerationKey, "1");
  auto waiter = server.client();
  std::thread driver([&] {
    std::this_thread::sleep_for(100ms);
    server.client()->set(kElasticControlGeneration, kElasticGenerationKey, "2");
  });
  try {
    waiter->wait(1, {"mesh/rank2"}, 20s);
    FAIL("the wait returned");
  } catch (const runrun::TimeoutError& error) {
    const std::string text = error.what();
    // Not "timed out after 20 s": ended by the new generation.
    CHECK(text.find("elastic generation 1 was replaced by generation 2") != std::string::npos);
    CHECK(text.find("timed out") == std::string::npos);
    CHECK(text.find("'mesh/rank2'") != std::string::npos);
  }
  driver.join();
  // A wait of the current generation, and one that arrives already replaced, are answered as
  // before and at once.
  server.client()->set(2, "mesh/rank0", "x");
  waiter->wait(2, {"mesh/rank0"}, 20s);
  CHECK_THROWS_AS(waiter->wait(1, {"mesh/rank2"}, 20s), runrun::TimeoutError);
}

TEST_CASE("generations isolate keys over the wire and old ones can be dropped", "[rendezvous]") {
  TestServer server;
  auto client = server.client();
  client->set(1, "rank/0", "gen1");
  CHECK_FALSE(client->get(2, "rank/0").has_value());
  CHECK_FALSE(client->check(2, {"rank/0"}));
  CHECK_THROWS_AS(client->wait(2, {"rank/0"}, 100ms), runrun::TimeoutError);
  client->set(2, "rank/0", "gen2");
  CHECK(client->get(1, "rank/0") == "gen1");
  CHECK(client->add(2, "count", 3) == 3);
  CHECK(client->add(1, "count", 1) == 1);
  client->drop_generations_before(2);
  CHECK_FALSE(client->get(1, "rank/0").has_value());
  CHECK(client->get(2, "rank/0") == "gen2");
  CHECK(client->remove(2, "rank/0"));
  CHECK_FALSE(client->get(2, "rank/0").has_value());
}

TEST_CASE("a request error leaves the connection usable", "[rendezvous]") {
  TestServer server;
  auto client = server.client();
  client->set(0, "text", "hello");
  CHECK_THROWS_WITH(client->add(0, "text", 1), Catch::Contains("not a counter"));
  CHECK(client->get(0, "text") == "hello");
}
