// Wire encoding of negotiation messages and the coordinator's matching.
#include <catch2/catch.hpp>

#include "core/message.h"
#include "core/message_table.h"
#include "core/response_cache.h"

using namespace runrun;

TEST_CASE("requests and responses survive the wire", "[message]") {
  Request r;
  r.name = "layer1.weight";
  r.op = OpType::kAlltoall;
  r.dtype = DataType::kBFloat16;
  r.shape = {4, 0, 3};
  r.reduce_op = ReduceOp::kMax;
  r.prescale = 0.5;
  r.postscale = 3.0;
  r.root = 2;
  r.splits = {1, 3};
  auto back = decode_requests(encode_requests({r, r}));
  REQUIRE(back.size() == 2);
  CHECK(back[1].signature() == r.signature());

  Response p;
  p.name = "x";
  p.first_dims = {1, 2, 3};
  p.error_code = ErrorCode::kMismatch;
  p.error = "bad";
  auto rp = decode_responses(encode_responses({p}));
  REQUIRE(rp.size() == 1);
  CHECK(rp[0].first_dims == p.first_dims);
  CHECK(rp[0].error == "bad");
  CHECK(!rp[0].ok());
}

TEST_CASE("truncated messages are an error, not a crash", "[message]") {
  Request r;
  r.name = "abc";
  std::string bytes = encode_requests({r});
  bytes.resize(bytes.size() - 3);
  CHECK_THROWS_AS(decode_requests(bytes), InternalError);
}

TEST_CASE("the message table completes a tensor once every rank asked", "[message]") {
  MessageTable table(3);
  Request r;
  r.name = "t";
  r.shape = {2};
  table.add(0, r);
  table.add(2, r);
  CHECK(table.take_completed().empty());
  auto waiting = table.waiting();
  REQUIRE(waiting.size() == 1);
  CHECK(waiting[0].missing_ranks == std::vector<int>{1});
  table.add(1, r);
  auto done = table.take_completed();
  REQUIRE(done.size() == 1);
  CHECK(done[0].ok());
  CHECK(table.waiting().empty());
}

TEST_CASE("allgather agrees on trailing dimensions only", "[message]") {
  Request a, b;
  a.name = b.name = "g";
  a.op = b.op = OpType::kAllgather;
  a.shape = {2, 5};
  b.shape = {3, 5};
  Response ok = build_response("g", {a, b});
  CHECK(ok.ok());
  CHECK(ok.first_dims == std::vector<int64_t>{2, 3});
  b.shape = {3, 4};
  Response bad = build_response("g", {a, b});
  CHECK(!bad.ok());
  CHECK_THAT(bad.error, Catch::Contains("rank 0: [*, 5]") && Catch::Contains("rank 1: [*, 4]"));
}

TEST_CASE("the response cache evicts the least recently used entry", "[message]") {
  ResponseCache cache(2);
  auto req = [](const char* name) {
    Request r;
    r.name = name;
    r.shape = {1};
    return r;
  };
  auto resp = [](const char* name) {
    Response r;
    r.name = name;
    return r;
  };
  cache.put(resp("a"), req("a").signature());
  cache.put(resp("b"), req("b").signature());
  cache.touch(cache.lookup("a", req("a").signature()).slot);
  cache.put(resp("c"), req("c").signature());  // evicts b
  CHECK(cache.lookup("a", req("a").signature()).match == ResponseCache::Match::kHit);
  CHECK(cache.lookup("b", req("b").signature()).match == ResponseCache::Match::kMiss);
  CHECK(cache.lookup("c", req("c").signature()).match == ResponseCache::Match::kHit);
  Request changed = req("a");
  changed.shape = {2};
  CHECK(cache.lookup("a", changed.signature()).match == ResponseCache::Match::kStale);
  CHECK(cache.num_slots() == 2);
}
