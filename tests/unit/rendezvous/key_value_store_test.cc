// KeyValueStore: generations isolate keys, counters, deletion, dropping old generations and
// the memory bound.
#include "rendezvous/key_value_store.h"

#include <catch2/catch.hpp>

using runrun::rendezvous::KeyValueStore;

TEST_CASE("keys of one generation are invisible in another", "[rendezvous]") {
  KeyValueStore store(1 << 20);
  REQUIRE(store.set(1, "addr/0", "host-a"));
  CHECK(store.get(1, "addr/0") == "host-a");
  CHECK_FALSE(store.get(2, "addr/0").has_value());
  CHECK(store.missing(2, {"addr/0"}) == std::vector<std::string>{"addr/0"});
  REQUIRE(store.set(2, "addr/0", "host-b"));
  CHECK(store.get(1, "addr/0") == "host-a");
  CHECK(store.get(2, "addr/0") == "host-b");
}

TEST_CASE("add counts atomically and refuses a value that is not a counter", "[rendezvous]") {
  KeyValueStore store(1 << 20);
  CHECK(store.add(0, "n", 1).value == 1);
  CHECK(store.add(0, "n", 5).value == 6);
  CHECK(store.add(0, "n", -2).value == 4);
  CHECK(store.get(0, "n") == "4");
  store.set(0, "text", "hello");
  auto result = store.add(0, "text", 1);
  CHECK_FALSE(result.value.has_value());
  CHECK(result.error.find("not a counter") != std::string::npos);
  CHECK(store.get(0, "text") == "hello");
}

TEST_CASE("drop_before frees older generations only", "[rendezvous]") {
  KeyValueStore store(1 << 20);
  store.set(1, "k", "v1");
  store.set(2, "k", "v2");
  store.set(3, "k", "v3");
  store.drop_before(3);
  CHECK_FALSE(store.get(1, "k").has_value());
  CHECK_FALSE(store.get(2, "k").has_value());
  CHECK(store.get(3, "k") == "v3");
  CHECK(store.bytes() == 3);
  CHECK(store.remove(3, "k"));
  CHECK_FALSE(store.remove(3, "k"));
  CHECK(store.bytes() == 0);
}

TEST_CASE("the store refuses a value beyond its memory bound and keeps the old one",
          "[rendezvous]") {
  KeyValueStore store(16);
  REQUIRE(store.set(0, "k", "small"));
  CHECK_FALSE(store.set(0, "k", std::string(100, 'x')));
  CHECK(store.get(0, "k") == "small");
  CHECK(store.bytes() == 6);
  CHECK(store.set(0, "k", "0123456789abcde"));  // replacing counts the new size only
}
