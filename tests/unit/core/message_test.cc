// Wire encoding of negotiation messages and the coordinator's matching.
#include <catch2/catch.hpp>

#include <cmath>

#include "common/errors.h"
#include "common/reduce_op.h"
#include "core/negotiation/message.h"
#include "core/negotiation/message_table.h"
#include "core/negotiation/response_cache.h"
#include "core/negotiation/response_list.h"
#include "runrun/c_api.h"

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
  CHECK(back[1].negotiates_like(r));
  CHECK(back[1].splits == r.splits);

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
  cache.put(resp("a"), req("a"));
  cache.put(resp("b"), req("b"));
  cache.touch(cache.lookup(req("a")).slot);
  cache.put(resp("c"), req("c"));  // evicts b
  CHECK(cache.lookup(req("a")).match == ResponseCache::Match::kHit);
  CHECK(cache.lookup(req("b")).match == ResponseCache::Match::kMiss);
  CHECK(cache.lookup(req("c")).match == ResponseCache::Match::kHit);
  Request changed = req("a");
  changed.shape = {2};
  CHECK(cache.lookup(changed).match == ResponseCache::Match::kStale);
  CHECK(cache.num_slots() == 2);
}

TEST_CASE("the response cache compares every negotiated field but the wait", "[message]") {
  Request base;
  base.name = "layer1.weight";
  base.shape = {4, 3};
  base.splits = {1, 3};
  base.group = "g";
  base.group_size = 2;
  Request later = base;
  later.waited_us = 12345;  // how long it waited is not part of what is negotiated
  CHECK(later.negotiates_like(base));
  const std::vector<std::pair<const char*, void (*)(Request&)>> changes = {
      {"name", [](Request& r) { r.name = "layer1.bias"; }},
      {"op", [](Request& r) { r.op = OpType::kAllgather; }},
      {"dtype", [](Request& r) { r.dtype = DataType::kFloat64; }},
      {"shape", [](Request& r) { r.shape = {3, 4}; }},
      {"device", [](Request& r) { r.device = DLDevice{kDLCUDA, 0}; }},
      {"reduce op", [](Request& r) { r.reduce_op = ReduceOp::kMax; }},
      {"prescale", [](Request& r) { r.prescale = 0.5; }},
      {"postscale", [](Request& r) { r.postscale = -0.0; }},
      {"root", [](Request& r) { r.root = 1; }},
      {"splits", [](Request& r) { r.splits = {3, 1}; }},
      {"group", [](Request& r) { r.group = "h"; }},
      {"group size", [](Request& r) { r.group_size = 3; }},
  };
  ResponseCache cache(4);
  Response response;
  response.name = base.name;
  cache.put(response, later);
  CHECK(cache.lookup(base).match == ResponseCache::Match::kHit);
  for (const auto& [field, change] : changes) {
    INFO("field: " << field);
    Request changed = base;
    change(changed);
    CHECK(!changed.negotiates_like(base));
    CHECK(!base.negotiates_like(changed));
    if (changed.name == base.name) {
      CHECK(cache.lookup(changed).match == ResponseCache::Match::kStale);
    } else {
      CHECK(cache.lookup(changed).match == ResponseCache::Match::kMiss);
    }
  }
}

TEST_CASE("the coordinator compares fields exactly and prints each rank's value", "[message]") {
  Request a;
  a.name = "w";
  a.shape = {2};
  Request b = a;
  CHECK(build_response("w", {a, b}).ok());
  b.postscale = 1.0000001;  // equal at six digits: still a mismatch, printed apart
  Response scale = build_response("w", {a, b});
  CHECK(scale.error_code == ErrorCode::kMismatch);
  CHECK_THAT(scale.error, Catch::Contains("mismatched postscale factor for allreduce of tensor "
                                          "'w': rank 0: 1, rank 1: 1.0000001"));
  b = a;
  a.prescale = b.prescale = std::nan("");
  CHECK(build_response("w", {a, b}).ok());
  b.group = "g";
  b.group_size = 2;
  CHECK_THAT(build_response("w", {a, b}).error,
             Catch::Contains("mismatched group") && Catch::Contains("rank 1: g of 2"));
  b = a;
  b.device = DLDevice{kDLCUDA, 0};
  CHECK_THAT(build_response("w", {a, b}).error,
             Catch::Contains("mismatched device") && Catch::Contains("rank 1: cuda"));
  a.device = DLDevice{kDLCUDA, 1};  // each rank its own GPU: the kind must agree, not the index
  CHECK(build_response("w", {a, b}).ok());
  Request g1, g2;
  g1.name = g2.name = "g";
  g1.op = g2.op = OpType::kAllgather;
  g1.shape = {};  // a scalar gathers like a vector of one element
  g2.shape = {5};
  CHECK(build_response("g", {g1, g2}).ok());
}

TEST_CASE("a response list keeps borrowed and owned responses in order", "[message]") {
  Response cached;
  cached.name = "cached";
  ResponseList list;
  list.add_borrowed(cached);
  Response answer;
  answer.name = "answer";
  list.add_owned(std::move(answer));
  for (int i = 0; i < 100; ++i) list.add_owned(Response{});  // owned ones never move
  const Response* first_owned = &list[1];
  ResponseList moved = std::move(list);
  REQUIRE(moved.size() == 102);
  CHECK(&moved[0] == &cached);
  CHECK(&moved[1] == first_owned);
  std::vector<std::string> names;
  for (const Response& r : moved) names.push_back(r.name);
  CHECK(names[0] == "cached");
  CHECK(names[1] == "answer");
  CHECK(std::distance(moved.begin(), moved.end()) == 102);
}

TEST_CASE("reduce op codes are Horovod's, in the core and the C API", "[message]") {
  // horovod/common/message.h: AVERAGE 0, SUM 1, ADASUM 2, MIN 3, MAX 4, PRODUCT 5.
  CHECK(reduce_op_from_int(0) == ReduceOp::kAverage);
  CHECK(reduce_op_from_int(1) == ReduceOp::kSum);
  CHECK(reduce_op_from_int(3) == ReduceOp::kMin);
  CHECK(reduce_op_from_int(4) == ReduceOp::kMax);
  CHECK(reduce_op_from_int(5) == ReduceOp::kProduct);
  CHECK(reduce_op_from_int(2) == ReduceOp::kAdasum);
  CHECK_THROWS_AS(reduce_op_from_int(6), InvalidArgumentError);
  CHECK_THROWS_AS(reduce_op_from_int(-1), InvalidArgumentError);
  CHECK(static_cast<int>(RUNRUN_OP_ADASUM) == static_cast<int>(ReduceOp::kAdasum));
  CHECK(static_cast<int>(RUNRUN_OP_MIN) == static_cast<int>(ReduceOp::kMin));
  CHECK(static_cast<int>(RUNRUN_OP_MAX) == static_cast<int>(ReduceOp::kMax));
  CHECK(static_cast<int>(RUNRUN_OP_PRODUCT) == static_cast<int>(ReduceOp::kProduct));
}
