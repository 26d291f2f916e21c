// The queue between framework threads and the background thread: pop_all hands the pushed
// entries over in order and gives the queue the caller's empty vector in exchange, so the
// vector a burst of single pushes grows into keeps its capacity from round to round.
#include <catch2/catch.hpp>

#include <memory>
#include <string>
#include <vector>

#include "core/handle.h"
#include "core/tensor_queue.h"

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
  queue.finished(std::string_view("a"));
  CHECK_NOTHROW(queue.push(one_entry("a"), 0));  // its name is free again
  CHECK_THROWS_AS(queue.push(one_entry("b"), 0), InvalidArgumentError);  // still in flight
}
