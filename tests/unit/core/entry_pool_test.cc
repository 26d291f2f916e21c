// The pool of finished entries (core/runtime/entry_pool.h): a recycled entry must look exactly
// like a
// new one (no field of the earlier op survives), keep its buffers' capacity, and the pool must
// keep no more than its capacity.
#include <catch2/catch.hpp>

#include <memory>
#include <string>
#include <vector>

#include "core/runtime/entry_pool.h"
#include "core/runtime/handle.h"

using namespace runrun;

namespace {

// Every field set to something other than a new entry's.
std::unique_ptr<TensorEntry> used_entry(int* marker) {
  auto e = std::make_unique<TensorEntry>();
  e->request.name = "a name longer than the short string buffer";
  e->request.op = OpType::kBroadcast;
  e->request.dtype = DataType::kInt64;
  e->request.shape = {2, 3, 4};
  e->request.device = DLDevice{kDLCUDA, 1};
  e->request.reduce_op = ReduceOp::kMax;
  e->request.prescale = 2.0;
  e->request.postscale = 3.0;
  e->request.root = 1;
  e->request.splits = {1, 2};
  e->request.group = "group:a name longer than the short string buffer:2";
  e->request.group_size = 2;
  e->request.waited_us = 7;
  e->unsent = true;
  e->name_hash = 12345;
  e->input = TensorView{marker, DataType::kInt64, {2, 3, 4}, DLDevice{kDLCUDA, 1}};
  e->output = e->input;
  e->handle = std::make_shared<Handle>();
  e->handle_index = 5;
  e->enqueued_at = std::chrono::steady_clock::now();
  e->action = [](Transport&, Handle&) {};
  return e;
}

}  // namespace

TEST_CASE("a recycled entry equals a new one and keeps its buffers", "[core][entry_pool]") {
  int marker = 0;
  EntryPool pool;
  std::vector<std::unique_ptr<TensorEntry>> done;
  done.push_back(used_entry(&marker));
  std::weak_ptr<Handle> handle = done.front()->handle;
  const TensorEntry* address = done.front().get();
  const char* name_buffer = done.front()->request.name.data();
  pool.give_back(done);
  CHECK(done.empty());
  CHECK(handle.expired());  // the op's handle is dropped with the entry's reference
  CHECK(pool.spare() == 1);

  std::unique_ptr<TensorEntry> e = pool.take();
  CHECK(pool.spare() == 0);
  REQUIRE(e.get() == address);
  const TensorEntry fresh;
  CHECK(e->request.name.empty());
  CHECK(e->request.name.data() == name_buffer);  // capacity kept
  CHECK(e->request.op == fresh.request.op);
  CHECK(e->request.dtype == fresh.request.dtype);
  CHECK(e->request.shape.empty());
  CHECK(e->request.shape.capacity() >= 3);
  CHECK(e->request.device.device_type == fresh.request.device.device_type);
  CHECK(e->request.device.device_id == fresh.request.device.device_id);
  CHECK(e->request.reduce_op == fresh.request.reduce_op);
  CHECK(e->request.prescale == fresh.request.prescale);
  CHECK(e->request.postscale == fresh.request.postscale);
  CHECK(e->request.root == fresh.request.root);
  CHECK(e->request.splits.empty());
  CHECK(e->request.group.empty());
  CHECK(e->request.group_size == fresh.request.group_size);
  CHECK(e->request.waited_us == fresh.request.waited_us);
  CHECK(e->request.negotiates_like(fresh.request));
  CHECK(e->unsent == fresh.unsent);
  CHECK(e->name_hash == fresh.name_hash);
  for (const TensorView* v : {&e->input, &e->output}) {
    CHECK(v->data == nullptr);
    CHECK(v->dtype == fresh.input.dtype);
    CHECK(v->shape.empty());
    CHECK(v->shape.capacity() >= 3);
    CHECK(v->device.device_type == fresh.input.device.device_type);
  }
  CHECK(e->handle == nullptr);
  CHECK(e->handle_index == 0);
  CHECK(e->enqueued_at == fresh.enqueued_at);
  CHECK(!e->action);
  CHECK(e->device_sync == nullptr);
}

TEST_CASE("the pool hands out new entries when empty and keeps at most its capacity",
          "[core][entry_pool]") {
  EntryPool pool(2);
  std::unique_ptr<TensorEntry> first = pool.take();  // empty pool: a new entry
  REQUIRE(first != nullptr);
  std::vector<std::unique_ptr<TensorEntry>> done;
  done.push_back(std::move(first));
  done.push_back(nullptr);  // an entry another owner took (skipped)
  done.push_back(std::make_unique<TensorEntry>());
  done.push_back(std::make_unique<TensorEntry>());
  pool.give_back(done);
  CHECK(done.empty());
  CHECK(pool.spare() == 2);  // the third was freed
  CHECK(pool.take() != nullptr);
  CHECK(pool.take() != nullptr);
  CHECK(pool.spare() == 0);
  CHECK(pool.take() != nullptr);  // empty again: new
}
