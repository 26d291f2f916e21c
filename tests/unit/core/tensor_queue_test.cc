// The queue between framework threads and the background thread: pop_all hands the pushed
// entries over in order and gives the queue the caller's empty vector in exchange, so the
// vector a burst of single pushes grows into keeps its capacity from round to round.
#include <catch2/catch.hpp>

#include <memory>
#include <string>
#include <vector>

#include "core/runtime/handle.h"
#include "core/runtime/tensor_queue.h"

using namespace runrun;

namespace {

std::vector<std::unique_ptr<TensorEntry>> one_entry(const std::string& name) {
  auto entry = std::make_unique<TensorEntry>();
  entry->request.name = name;
  entry->handle = std::make_shared<Handle>();
  std::vector<std::unique_ptr<TensorEntry>> entries;
  entries.push_back(std::move(entry));
  return entries;
}

}  // namespace

TEST_CASE("pop_all hands over the pushed entries in order and keeps the vectors' capacity",
          "[core][queue]") {
  TensorQueue queue;
  std::vector<std::unique_ptr<TensorEntry>> arrivals;
  arrivals.reserve(64);
  queue.pop_all(arrivals);  // nothing pushed: the queue now holds the reserved vector
  CHECK(arrivals.empty());
  for (const char* name : {"a", "b", "c"}) queue.push(one_entry(name), 0);
  queue.pop_all(arrivals);
  REQUIRE(arrivals.size() == 3);
  CHECK(arrivals[0]->request.name == "a");
  CHECK(arrivals[2]->request.name == "c");
  CHECK(arrivals.capacity() >= 64);  // pushed into the vector the queue got in exchange
  // The entries stay alive until finished(), as in the worker: the queue keeps views of names.
  std::vector<std::unique_ptr<TensorEntry>> next;
  queue.push(one_entry("d"), 0);
  queue.pop_all(next);
  REQUIRE(next.size() == 1);
  CHECK(next[0]->request.name == "d");
  // The queue hashed each name once, for every table after it (core/negotiation/hashed_name.h).
  CHECK(arrivals[0]->name_hash == hash_name("a"));
  CHECK(next[0]->name_hash == hash_name("d"));
  queue.finished({arrivals[0]->request.name, arrivals[0]->name_hash});
  CHECK_NOTHROW(queue.push(one_entry("a"), 0));                          // its name is free again
  CHECK_THROWS_AS(queue.push(one_entry("b"), 0), InvalidArgumentError);  // still in flight
}

namespace {

std::unique_ptr<TensorEntry> entry_named(const std::string& name) {
  return std::move(one_entry(name).front());
}

std::vector<std::unique_ptr<TensorEntry>> group_of(const std::vector<std::string>& names) {
  std::vector<std::unique_ptr<TensorEntry>> entries;
  for (const std::string& name : names) entries.push_back(entry_named(name));
  return entries;
}

}  // namespace

TEST_CASE("a refused group leaves none of its names in flight", "[core][queue]") {
  TensorQueue queue;
  std::vector<std::unique_ptr<TensorEntry>> held;
  queue.push(entry_named("busy"), 0);
  // The third member is in flight: the first two, inserted before it was found, are taken back.
  CHECK_THROWS_WITH(
      queue.push(group_of({"x", "y", "busy"}), 3),
      Catch::Contains("tensor 'busy' on rank 3") && Catch::Contains("already in flight"));
  // A name repeated within one group is refused the same way.
  CHECK_THROWS_WITH(queue.push(group_of({"p", "q", "p"}), 0),
                    Catch::Contains("tensor 'p'") && Catch::Contains("already in flight"));
  // None of the refused groups' names stayed in flight, and nothing was queued.
  CHECK_NOTHROW(queue.push(group_of({"x", "y", "p", "q"}), 0));
  queue.pop_all(held);
  REQUIRE(held.size() == 5);
  CHECK(held[0]->request.name == "busy");
  CHECK(held[1]->request.name == "x");
  CHECK(held[4]->request.name == "q");
}

TEST_CASE("names finished and pushed again many times stay exactly in flight", "[core][queue]") {
  // finished() keeps the set's nodes for the next pushes: reused nodes must carry the new name.
  TensorQueue queue;
  std::vector<std::unique_ptr<TensorEntry>> held;
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < 10; ++i) queue.push(entry_named(std::to_string(round * 10 + i)), 0);
    std::vector<std::unique_ptr<TensorEntry>> popped;
    queue.pop_all(popped);
    REQUIRE(popped.size() == 10);
    // Every name of this round is in flight; the previous round's are free.
    for (int i = 0; i < 10; ++i) {
      CHECK_THROWS_AS(queue.push(entry_named(std::to_string(round * 10 + i)), 0),
                      InvalidArgumentError);
    }
    std::vector<HashedName> names;
    for (const auto& entry : popped) names.push_back({entry->request.name, entry->name_hash});
    queue.finished(names);
    for (auto& entry : popped) held.push_back(std::move(entry));  // alive, as in the worker
  }
  for (int i = 0; i < 30; ++i) CHECK_NOTHROW(queue.push(entry_named(std::to_string(i)), 0));
  CHECK_THROWS_AS(queue.push(entry_named("29"), 0), InvalidArgumentError);
}
