// The stall message's hint: which tensor the missing ranks submitted instead, and when the two
// names look like one name made from a per-process counter.
#include "core/negotiation/stall_hint.h"

#include <catch2/catch.hpp>

using runrun::MessageTable;
using runrun::names_differ_only_in_numbers;
using runrun::stall_hint;

namespace {
MessageTable::Waiting row(std::string name, std::vector<int> missing) {
  return {std::move(name), std::move(missing), std::chrono::seconds(70)};
}
bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}
}  // namespace

TEST_CASE("names that differ only in their numbers", "[core][stall]") {
  CHECK(names_differ_only_in_numbers("SyncBatchNormalization.sync_batch_normalization",
                                     "SyncBatchNormalization.sync_batch_normalization_1"));
  CHECK(names_differ_only_in_numbers("dense_1/kernel", "dense_12/kernel"));
  CHECK(names_differ_only_in_numbers("allreduce.noname.3", "allreduce.noname.4"));
  CHECK_FALSE(names_differ_only_in_numbers("grads.0", "grads.0"));
  CHECK_FALSE(names_differ_only_in_numbers("grads", "metric"));
  CHECK_FALSE(names_differ_only_in_numbers("grads_a", "grads_b1"));
}

TEST_CASE("the hint names what the missing ranks submitted instead", "[core][stall]") {
  // Ranks 0 and 2 wait on 'dense_1/kernel'; rank 1 submitted 'dense_2/kernel' instead.
  const auto stalled = row("dense_1/kernel", {1});
  const std::vector<MessageTable::Waiting> waiting = {
      row("allreduce.loss", {0, 1}),  // rank 1 did not submit it: not a candidate
      stalled, row("dense_2/kernel", {0, 2}), row("zzz", {0, 2})};
  const std::string hint = stall_hint(stalled, waiting);
  CHECK(contains(hint,
                 "Meanwhile ranks [1] submitted 'dense_2/kernel' (and 1 other tensors), "
                 "which ranks [0, 2] have not: the two names differ only in their numbers"));
  CHECK(contains(hint, "give the op or the layer an explicit name"));
  CHECK_FALSE(contains(hint, "allreduce.loss"));
}

TEST_CASE("the hint for names that differ otherwise, and none without a candidate",
          "[core][stall]") {
  const auto stalled = row("grads", {1});
  CHECK(stall_hint(stalled, {stalled, row("metric", {0})}) ==
        " Meanwhile ranks [1] submitted 'metric', which ranks [0] have not: if they are the same "
        "tensor, its name differs between ranks.");
  // Rank 1 submitted nothing that the others wait for: no hint (a rank stuck in its own code).
  CHECK(stall_hint(stalled, {stalled}).empty());
  CHECK(stall_hint(stalled, {stalled, row("other", {1})}).empty());
  // A candidate must have been submitted by every missing rank.
  CHECK(stall_hint(row("x", {1, 2}), {row("x", {1, 2}), row("y", {0, 2})}).empty());
}
