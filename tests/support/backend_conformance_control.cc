// Topology, barrier, control channel and subgroup checks of the conformance suite.

#include <memory>
#include <string>
#include <vector>

#include "tests/support/backend_conformance.h"
#include "tests/support/backend_conformance_values.h"

namespace runrun::conformance {
namespace {

// Rank `rank`'s control message of a given base length; contents depend on rank and position.
std::string message_of(int rank, size_t base) {
  const size_t length = base == 0 ? 0 : base + static_cast<size_t>(rank) * 5;
  std::string text(length, '\0');
  for (size_t i = 0; i < length; ++i)
    text[i] = static_cast<char>((i * 31 + static_cast<size_t>(rank) * 7) % 256);
  return text;
}

void check_allreduce_and(Backend& backend) {
  for (size_t words : {size_t{0}, size_t{1}, size_t{3}, size_t{100}}) {
    auto bits_of = [&](int r) {
      std::vector<uint64_t> bits(words);
      for (size_t i = 0; i < words; ++i)
        bits[i] = ~(uint64_t{1} << ((i + static_cast<size_t>(r)) % 64));
      return bits;
    };
    std::vector<uint64_t> expected = bits_of(0);
    for (int r = 1; r < backend.size(); ++r) {
      const auto other = bits_of(r);
      for (size_t i = 0; i < words; ++i) expected[i] &= other[i];
    }
    auto bits = bits_of(backend.rank());
    backend.control().allreduce_and(bits);
    expect_true(backend, bits == expected,
                "control allreduce_and of " + std::to_string(words) +
                    " words differs from the AND "
                    "of every rank's bits");
  }
}

void check_gather(Backend& backend) {
  for (size_t base : {size_t{0}, size_t{1}, size_t{100}, size_t{70000}}) {
    for (int root = 0; root < backend.size(); ++root) {
      const auto gathered = backend.control().gather(message_of(backend.rank(), base), root);
      const std::string what =
          "control gather to root " + std::to_string(root) + " base " + std::to_string(base);
      if (backend.rank() != root) {
        expect_true(backend, gathered.empty(), what + ": a non-root got a non-empty result");
        continue;
      }
      expect_true(backend, gathered.size() == static_cast<size_t>(backend.size()),
                  what + ": root got " + std::to_string(gathered.size()) + " entries");
      for (int r = 0; r < backend.size(); ++r) {
        expect_true(backend, gathered[static_cast<size_t>(r)] == message_of(r, base),
                    what + ": entry of rank " + std::to_string(r) + " differs");
      }
    }
  }
}

void check_control_broadcast(Backend& backend) {
  for (size_t base : {size_t{0}, size_t{1}, size_t{100}, size_t{100000}}) {
    for (int root = 0; root < backend.size(); ++root) {
      std::string bytes = backend.rank() == root ? message_of(root, base) : std::string(13, 'x');
      backend.control().broadcast(bytes, root);
      expect_true(backend, bytes == message_of(root, base),
                  "control broadcast from root " + std::to_string(root) + " base " +
                      std::to_string(base) + ": got " + std::to_string(bytes.size()) + " bytes");
    }
  }
}

// Runs the small suite in the subgroup of `members` (sorted) and checks who got a backend.
void subgroup_case(Backend& backend, const std::vector<int>& members, const std::string& label,
                   const Options& options) {
  std::unique_ptr<Backend> sub = backend.create_subgroup(members);
  int index = -1;
  for (size_t i = 0; i < members.size(); ++i) {
    if (members[i] == backend.rank()) index = static_cast<int>(i);
  }
  const std::string what = "create_subgroup " + label;
  expect_true(backend, (sub != nullptr) == (index >= 0),
              what + ": a member must get a backend and a non-member nullptr");
  if (!sub) return;
  expect_true(backend, sub->rank() == index && sub->size() == static_cast<int>(members.size()),
              what + ": subgroup rank/size " + std::to_string(sub->rank()) + "/" +
                  std::to_string(sub->size()) + ", expected " + std::to_string(index) + "/" +
                  std::to_string(members.size()));
  Options small;
  small.sizes = {0, 1, 7};
  small.large_count = 0;
  small.subgroups = false;
  small.reduces = options.reduces;
  run_all(*sub, small);
}

}  // namespace

void check_topology(Backend& backend) {
  const Topology& t = backend.topology();
  const bool sane = t.size >= 1 && t.rank >= 0 && t.rank < t.size && t.local_size >= 1 &&
                    t.local_rank >= 0 && t.local_rank < t.local_size && t.cross_size >= 1 &&
                    t.cross_rank >= 0 && t.cross_rank < t.cross_size && t.local_size <= t.size &&
                    t.cross_size <= t.size;
  expect_true(backend, sane,
              "topology is inconsistent: local " + std::to_string(t.local_rank) + "/" +
                  std::to_string(t.local_size) + ", cross " + std::to_string(t.cross_rank) + "/" +
                  std::to_string(t.cross_size));
  // Every rank must agree on the number of hosts (= cross_size of local rank 0).
  std::string mine = std::to_string(t.local_rank) + ":" + std::to_string(t.cross_size);
  backend.control().broadcast(mine, 0);
  const std::string expected_prefix = "0:";
  expect_true(backend, mine.rfind(expected_prefix, 0) == 0, "rank 0 must have local_rank 0");
}

void check_barrier(Backend& backend) {
  for (int i = 0; i < 3; ++i) backend.barrier();
}

void check_control_channel(Backend& backend) {
  check_allreduce_and(backend);
  check_gather(backend);
  check_control_broadcast(backend);
}

void check_subgroups(Backend& backend, const Options& options) {
  const int size = backend.size();
  std::vector<int> all;
  std::vector<int> evens;
  std::vector<int> odds;
  for (int r = 0; r < size; ++r) {
    all.push_back(r);
    (r % 2 == 0 ? evens : odds).push_back(r);
  }
  subgroup_case(backend, all, "of every rank", options);
  subgroup_case(backend, evens, "of the even ranks", options);
  if (!odds.empty()) subgroup_case(backend, odds, "of the odd ranks", options);
  subgroup_case(backend, {size - 1}, "of the last rank alone", options);
  backend.barrier();
}

}  // namespace runrun::conformance
