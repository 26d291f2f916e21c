// Authentication and bounds: the right secret works; a wrong or missing secret, a client that
// skips the handshake, garbage and oversized frames are refused with a clear error, the store is
// untouched, and the server goes on serving.
#include <catch2/catch.hpp>

#include <spdlog/sinks/ostream_sink.h>

#include <cstdlib>
#include <sstream>
#include <thread>

#include "common/env_names.h"
#include "common/errors.h"
#include "rendezvous/client_environment.h"
#include "rendezvous/protocol.h"
#include "rendezvous/wire_codec.h"
#include "rendezvous_fixture.h"

using namespace runrun::rendezvous;
using namespace std::chrono_literals;
using runrun::rendezvous::test::RawConnection;
using runrun::rendezvous::test::TestServer;

namespace {

std::string set_request(const std::string& key, const std::string& value) {
  PayloadWriter writer;
  writer.u8(static_cast<uint8_t>(MessageType::kSet));
  writer.u64(0);
  writer.string(key);
  writer.string(value);
  return frame(writer.bytes());
}

std::string auth_frame(const JobSecret& secret, const std::string& hello) {
  PayloadReader reader(hello);
  reader.u8();
  reader.string();
  reader.u32();
  const std::string server_nonce = reader.raw(kNonceBytes);
  const std::string client_nonce(kNonceBytes, 'c');
  const std::string proof = secret.proof("client", server_nonce, client_nonce);
  PayloadWriter writer;
  writer.u8(static_cast<uint8_t>(MessageType::kAuth));
  writer.raw(client_nonce);
  writer.u8(static_cast<uint8_t>(proof.size()));
  writer.raw(proof);
  return frame(writer.bytes());
}

// The refusal reason of a Refused frame; 0 for any other frame.
int refusal_reason(const std::string& payload) {
  if (payload.size() < 2 || static_cast<MessageType>(payload[0]) != MessageType::kRefused) return 0;
  return payload[1];
}

}  // namespace

TEST_CASE("a client with the job secret is served", "[rendezvous]") {
  TestServer server;
  auto client = server.client();
  client->set(0, "k", "v");
  CHECK(client->get(0, "k") == "v");
  CHECK(server.server.refused_connections() == 0);
}

TEST_CASE("a client with a wrong secret is refused and the store is untouched", "[rendezvous]") {
  TestServer server;
  server.client()->set(0, "k", "original");
  try {
    RendezvousClient intruder(server.options(JobSecret::generate()));
    FAIL("a client with a wrong secret was accepted");
  } catch (const runrun::InvalidArgumentError& error) {
    const std::string text = error.what();
    CHECK(text.find("rendezvous server at 127.0.0.1:" + std::to_string(server.server.port()) +
                    " refused this rank (test rank): wrong job secret") != std::string::npos);
    CHECK(text.find(runrun::env::kRendezvousSecret) != std::string::npos);
  }
  CHECK(server.client()->get(0, "k") == "original");
  CHECK(server.server.refused_connections() == 1);
}

TEST_CASE("a client without a secret is refused with a clear error", "[rendezvous]") {
  TestServer server;
  server.client()->set(0, "k", "original");
  CHECK_THROWS_WITH(RendezvousClient(server.options(JobSecret())),
                    Catch::Contains("refused this rank (test rank): no job secret presented") &&
                        Catch::Contains("was not set in this process"));
  CHECK(server.client()->get(0, "k") == "original");
}

TEST_CASE("requests sent with a wrong proof or without authenticating never reach the store",
          "[rendezvous]") {
  TestServer server;
  server.client()->set(0, "k", "original");
  SECTION("a set pipelined right behind a wrong proof") {
    RawConnection raw(server.server.port());
    const std::string hello = raw.receive();
    raw.send(auth_frame(JobSecret::generate(), hello) + set_request("k", "forged"));
    CHECK(refusal_reason(raw.receive()) == static_cast<int>(RefusalReason::kWrongSecret));
  }
  SECTION("a set instead of the authentication") {
    RawConnection raw(server.server.port());
    raw.receive();
    raw.send(set_request("k", "forged"));
    CHECK(refusal_reason(raw.receive()) == static_cast<int>(RefusalReason::kProtocol));
  }
  CHECK(server.client()->get(0, "k") == "original");
}

TEST_CASE("garbage and oversized frames are refused and the server goes on", "[rendezvous]") {
  TestServer server;
  SECTION("an HTTP request") {
    RawConnection raw(server.server.port());
    raw.receive();
    raw.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
    CHECK(refusal_reason(raw.receive()) == static_cast<int>(RefusalReason::kProtocol));
  }
  SECTION("a 4 GiB frame header before authenticating") {
    RawConnection raw(server.server.port());
    raw.receive();
    raw.send(std::string("\xff\xff\xff\xff", 4) + "xxxx");
    CHECK(refusal_reason(raw.receive()) == static_cast<int>(RefusalReason::kProtocol));
  }
  SECTION("an oversized frame after authenticating") {
    RawConnection raw(server.server.port());
    const std::string hello = raw.receive();
    raw.send(auth_frame(server.secret, hello));
    CHECK(static_cast<MessageType>(raw.receive()[0]) == MessageType::kWelcome);
    PayloadWriter header;
    header.u32(static_cast<uint32_t>(kDefaultMaxFrameBytes + 1));
    raw.send(header.bytes());
    CHECK(refusal_reason(raw.receive()) == static_cast<int>(RefusalReason::kProtocol));
  }
  SECTION("a malformed request after authenticating") {
    RawConnection raw(server.server.port());
    const std::string hello = raw.receive();
    raw.send(auth_frame(server.secret, hello));
    raw.receive();
    raw.send(frame(std::string("\x0a\x00", 2)));  // a set cut short
    const std::string answer = raw.receive();
    CHECK(static_cast<MessageType>(answer[0]) == MessageType::kError);
    CHECK(answer.find("malformed request") != std::string::npos);
  }
  auto client = server.client();
  client->set(0, "after", "fine");
  CHECK(client->get(0, "after") == "fine");
}

TEST_CASE("a value above the server's frame limit fails that client clearly", "[rendezvous]") {
  JobSecret secret = JobSecret::generate();
  ServerOptions small;
  small.max_frame_bytes = 1024;
  RendezvousServer server(secret, small);
  ClientOptions options;
  options.host = "127.0.0.1";
  options.port = server.port();
  options.secret = secret;
  RendezvousClient client(options);
  CHECK_THROWS_WITH(client.set(0, "big", std::string(4096, 'x')),
                    Catch::Contains("a frame of") && Catch::Contains("the limit is 1024"));
  RendezvousClient other(options);
  CHECK_FALSE(other.get(0, "big").has_value());
}

TEST_CASE("a rank reads the secret from its environment once, removes it and keeps it",
          "[rendezvous]") {
  TestServer server;
  for (const auto& [name, value] :
       rank_environment("127.0.0.1", server.server.port(), server.secret)) {
    ::setenv(name.c_str(), value.c_str(), 1);
  }
  ClientOptions options = client_options_from_environment();
  CHECK(std::getenv(runrun::env::kRendezvousSecret) == nullptr);
  CHECK(options.port == server.server.port());
  RendezvousClient client(options);
  client.set(0, "k", "v");
  CHECK(client.get(0, "k") == "v");
  // Read once per process and kept in memory: initializing again after a shutdown connects
  // with the same secret, though the environment no longer holds it.
  RendezvousClient again(client_options_from_environment());
  CHECK(again.get(0, "k") == "v");
  CHECK(std::getenv(runrun::env::kRendezvousSecret) == nullptr);
  CHECK_THROWS_WITH(
      JobSecret::from_hex("not-hex", runrun::env::kRendezvousSecret),
      Catch::Contains("RUNRUN_RENDEZVOUS_SECRET is malformed") && !Catch::Contains("not-hex"));
  ::unsetenv(runrun::env::kRendezvousAddr);
  ::unsetenv(runrun::env::kRendezvousPort);
  ::unsetenv(runrun::env::kRendezvousSecret);
}

TEST_CASE("a flood of refused connections is reported in a bounded number of lines",
          "[rendezvous]") {
  // 14,503 lines under a flood before (issue 36, point 8): now ten, then counted.
  std::ostringstream log;
  ServerOptions options;
  options.logger = std::make_shared<spdlog::logger>(
      "refusals", std::make_shared<spdlog::sinks::ostream_sink_mt>(log));
  const JobSecret secret = JobSecret::generate();
  auto server = std::make_unique<RendezvousServer>(secret, options);
  ClientOptions client;
  client.host = "127.0.0.1";
  client.port = server->port();
  client.secret = JobSecret::generate();  // another job's
  client.connect_timeout = std::chrono::seconds(5);
  client.request_timeout = std::chrono::seconds(5);
  constexpr int kAttempts = 40;
  for (int i = 0; i < kAttempts; ++i) {
    CHECK_THROWS(RendezvousClient(client).set(0, "k", "v"));
  }
  for (int i = 0; i < 100 && server->refused_connections() < kAttempts; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  CHECK(server->refused_connections() == kAttempts);
  server->stop();
  const std::string text = log.str();
  size_t lines = 0;
  for (char c : text) lines += c == '\n';
  INFO(text);
  CHECK(lines == 11);  // ten refusals, then one line for the other 30
  CHECK_THAT(text, Catch::Contains("further refusals are counted, one line every 10 s"));
  CHECK_THAT(text, Catch::Contains("refused 30 more connection(s) (40 in all; the last from "
                                   "127.0.0.1:"));
}
