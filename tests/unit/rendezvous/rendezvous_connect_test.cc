// Connecting: retries until a late server is up, a bounded failure when it never comes, and a
// clean stop that waiting clients see as a lost connection rather than a hang.
#include <catch2/catch.hpp>

#include <future>

#include "common/errors.h"
#include "rendezvous_fixture.h"

using namespace runrun::rendezvous;
using namespace std::chrono_literals;
using runrun::rendezvous::test::ReservedPort;

namespace {

ClientOptions options_for(uint16_t port, const JobSecret& secret,
                          std::chrono::milliseconds timeout) {
  ClientOptions options;
  options.host = "127.0.0.1";
  options.port = port;
  options.secret = secret;
  options.connect_timeout = timeout;
  options.who = "rank 3";
  return options;
}

}  // namespace

TEST_CASE("a client started before the server connects once it is up", "[rendezvous]") {
  const JobSecret secret = JobSecret::generate();
  const ReservedPort reserved;  // held until the server listens on it
  const uint16_t port = reserved.port;
  auto client = std::async(std::launch::async, [&] {
    return std::make_unique<RendezvousClient>(options_for(port, secret, 20s));
  });
  std::this_thread::sleep_for(300ms);  // the client is retrying meanwhile
  ServerOptions server_options;
  server_options.port = port;
  RendezvousServer server(secret, server_options);
  auto connected = client.get();
  connected->set(0, "k", "v");
  CHECK(connected->get(0, "k") == "v");
}

TEST_CASE("a server that never comes up fails the client within its bound", "[rendezvous]") {
  const ReservedPort reserved;
  const uint16_t port = reserved.port;
  const auto start = std::chrono::steady_clock::now();
  try {
    RendezvousClient client(options_for(port, JobSecret::generate(), 500ms));
    FAIL("connected to nothing");
  } catch (const runrun::TimeoutError& error) {
    const std::string text = error.what();
    CHECK(text.find("rank 3 could not reach the rendezvous server at 127.0.0.1:" +
                    std::to_string(port) + " within 0.5 s") != std::string::npos);
    CHECK(text.find("RUNRUN_RENDEZVOUS_TIMEOUT") != std::string::npos);
  }
  CHECK(std::chrono::steady_clock::now() - start < 15s);  // bounded, not a timing assertion
}

TEST_CASE("stopping the server ends a parked wait with a lost-connection error", "[rendezvous]") {
  const JobSecret secret = JobSecret::generate();
  RendezvousServer server(secret, ServerOptions{});
  RendezvousClient client(options_for(server.port(), secret, 20s));
  client.set(0, "k", "v");
  auto waiting = std::async(std::launch::async, [&] { client.wait(0, {"never"}, 60s); });
  std::this_thread::sleep_for(100ms);
  server.stop();
  CHECK_THROWS_WITH(waiting.get(), Catch::Contains("connection was lost"));
  CHECK_THROWS_WITH(client.get(0, "k"), Catch::Contains("is impossible"));
  server.stop();  // idempotent
}
