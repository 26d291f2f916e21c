// The shared-memory allreduce's two large-buffer algorithms (ops/shm/shm_collectives.h): the
// single-copy one (each rank reads its peers' buffers with process_vm_readv and reduces its own
// slice) and the slot one (two copies through the segment). Both must give, on every rank, the
// bits of the rank-order reduction computed here with the same kernels: every dtype and op,
// counts not divisible by the ranks and spanning many chunks, 2, 3 and 4 ranks, as threads and
// as real processes (where the kernel's cross-process check actually applies).

#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <functional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "common/data_type.h"
#include "common/errors.h"
#include "common/reduce_op.h"
#include "ops/cpu/reduce_kernels.h"
#include "ops/shm/shm_collectives.h"
#include "ops/shm/shm_group.h"
#include "tests/unit/ops/shm_file_board.h"

using runrun::DataType;
using runrun::ReduceOp;
using runrun::testing::FileBoard;
using runrun::testing::TemporaryFolder;
namespace shm = runrun::shm;

namespace {

// Arbitrary bytes per rank and element (NaNs and infinities included: the reference reduces
// them with the same kernels in the same order, so the bits must still match).
std::vector<char> data_of(int rank, size_t bytes, size_t salt) {
  std::vector<char> data(bytes);
  uint64_t state = 0x9e3779b97f4a7c15ULL * (static_cast<uint64_t>(rank) + 1) + salt;
  for (auto& byte : data) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    byte = static_cast<char>(state >> 56);
  }
  return data;
}

// Every dtype x op x count on this group (`counts_of(element size)`, by default one element
// past a slot (the smallest large-buffer case), a prime, and many chunks); returns what went
// wrong ("" when nothing).
// `shift` > 0: each rank's buffer starts `shift` + 8 x rank bytes past a 64-byte boundary
// (mod 64), so copies between it and the page-aligned slots, and between ranks' buffers, take
// every relative alignment that copy_bytes (ops/cpu/copy_bytes.h) tells apart.
// `only`, when set, restricts the dtypes.
std::string check_every_allreduce(shm::Group& group,
                                  std::function<std::vector<size_t>(size_t)> counts_of = nullptr,
                                  size_t shift = 0, std::function<bool(DataType)> only = nullptr) {
  if (!counts_of) {
    counts_of = [&group](size_t esize) {
      return std::vector<size_t>{group.capacity() / esize + 1, 5003, 3 * group.capacity() + 7};
    };
  }
  const ReduceOp ops[] = {ReduceOp::kSum, ReduceOp::kMin, ReduceOp::kMax, ReduceOp::kProduct};
  size_t salt = 0;
  for (int t = 0; t < runrun::kNumDataTypes; ++t) {
    const auto type = static_cast<DataType>(t);
    if (only && !only(type)) continue;
    const size_t esize = runrun::element_size(type);
    const auto counts = counts_of(esize);
    for (const ReduceOp op : ops) {
      for (const size_t count : counts) {
        ++salt;
        const size_t bytes = count * esize;
        const auto data = data_of(group.rank(), bytes, salt);
        std::vector<char> holder(bytes + 128);
        const auto address = reinterpret_cast<uintptr_t>(holder.data());
        const size_t skew = shift == 0 ? 0 : (shift + 8 * static_cast<size_t>(group.rank())) % 64;
        char* mine = holder.data() + (64 - address % 64) % 64 + skew;
        std::memcpy(mine, data.data(), bytes);
        auto expected = data_of(0, bytes, salt);
        for (int p = 1; p < group.size(); ++p) {
          const auto theirs = data_of(p, bytes, salt);
          runrun::cpu::reduce_into(expected.data(), theirs.data(), count, type, op);
        }
        shm::allreduce(group, mine, count, type, op);
        if (std::memcmp(mine, expected.data(), bytes) != 0) {
          size_t at = 0;
          while (mine[at] == expected[at]) ++at;
          return std::string(runrun::data_type_name(type)) + " " +
                 std::string(runrun::reduce_op_name(op)) + " of " + std::to_string(count) +
                 " elements on rank " + std::to_string(group.rank()) + " of " +
                 std::to_string(group.size()) + ": byte " + std::to_string(at) + " differs";
        }
      }
    }
  }
  return "";
}

shm::GroupOptions options_with(bool single_copy) {
  shm::GroupOptions options;
  options.collective_timeout = std::chrono::seconds(60);
  options.connect_timeout = std::chrono::seconds(60);
  options.capacity = 4096;  // small slots: many chunks and pieces
  options.single_copy = single_copy;
  return options;
}

// Connects and checks; also that the group took the requested algorithm (the kernel permits
// reading a peer of the same user here; a machine that forbids it fails this loudly).
std::string connect_and_check(FileBoard& board, int rank, int size, bool single_copy) {
  try {
    std::string why;
    auto group = shm::Group::connect(board, "g", rank, size, options_with(single_copy), &why);
    if (!group) return "no group: " + why;
    if (group->single_copy() != single_copy) {
      return std::string("rank ") + std::to_string(rank) + ": single_copy() is " +
             (group->single_copy() ? "on" : "off") +
             " (process_vm_readv between the ranks is refused on this machine?)";
    }
    return check_every_allreduce(*group);
  } catch (const std::exception& e) {
    return e.what();
  }
}

// Runs `check(rank)` for every rank of a group of `size`, each rank in its own thread, and
// fails the test with every rank's problem ("" is none; an exception is one).
void expect_clean_ranks(int size, const std::function<std::string(int rank)>& check) {
  std::vector<std::string> problems(static_cast<size_t>(size));
  std::vector<std::thread> threads;
  for (int rank = 0; rank < size; ++rank) {
    threads.emplace_back([&, rank] {
      try {
        problems[static_cast<size_t>(rank)] = check(rank);
      } catch (const std::exception& e) {
        problems[static_cast<size_t>(rank)] = e.what();
      }
    });
  }
  for (auto& thread : threads) thread.join();
  for (const auto& problem : problems) CHECK(problem.empty());
  for (const auto& problem : problems) {
    if (!problem.empty()) FAIL(problem);
  }
}

// A group of `size` ranks with 1 MiB slots (the one-step and chunk boundaries below a slot).
std::unique_ptr<shm::Group> connect_large(FileBoard& board, int rank, int size, bool single_copy) {
  auto options = options_with(single_copy);
  options.capacity = size_t{1} << 20;
  std::string why;
  auto group = shm::Group::connect(board, "g", rank, size, options, &why);
  if (!group) throw std::runtime_error("no group: " + why);
  return group;
}

}  // namespace

TEST_CASE("shm allreduce, ranks as threads: both algorithms give the rank-order bits") {
  for (const bool single_copy : {true, false}) {
    for (int size = 2; size <= 4; ++size) {
      INFO("single_copy " << single_copy << ", " << size << " ranks");
      const TemporaryFolder folder("runrun-shm-allreduce");
      FileBoard board(folder.path());
      expect_clean_ranks(
          size, [&](int rank) { return connect_and_check(board, rank, size, single_copy); });
    }
  }
}

TEST_CASE("shm allreduce, ranks as processes: both algorithms give the rank-order bits") {
  for (const bool single_copy : {true, false}) {
    for (int size = 2; size <= 4; ++size) {
      INFO("single_copy " << single_copy << ", " << size << " ranks");
      const TemporaryFolder folder("runrun-shm-allreduce");
      std::vector<pid_t> children;
      for (int rank = 1; rank < size; ++rank) {
        const pid_t child = fork();
        if (child == 0) {
          alarm(120);  // a bound should the parent never come
          FileBoard board(folder.path());
          const std::string problem = connect_and_check(board, rank, size, single_copy);
          if (!problem.empty()) std::fprintf(stderr, "%s\n", problem.c_str());
          _exit(problem.empty() ? 0 : 1);
        }
        REQUIRE(child > 0);
        children.push_back(child);
      }
      FileBoard board(folder.path());
      const std::string problem = connect_and_check(board, 0, size, single_copy);
      for (const pid_t child : children) {
        int status = 0;
        waitpid(child, &status, 0);
        CHECK((WIFEXITED(status) && WEXITSTATUS(status) == 0));
      }
      if (!problem.empty()) FAIL(problem);
    }
  }
}

TEST_CASE("shm allreduce between the one-step size and a slot: rank-order bits at 2-4 ranks") {
  // With 1 MiB slots, 3 and 4 ranks take single copy here (2 ranks the slots): just past the
  // one-step size and an uneven count well below a slot.
  for (int size = 2; size <= 4; ++size) {
    INFO(size << " ranks");
    const TemporaryFolder folder("runrun-shm-allreduce");
    FileBoard board(folder.path());
    expect_clean_ranks(size, [&](int rank) {
      auto group = connect_large(board, rank, size, true);
      return check_every_allreduce(*group, [&](size_t esize) {
        return std::vector<size_t>{shm::kOneStepBytes / esize + 1, 40009};
      });
    });
  }
}

TEST_CASE("shm allreduce from misaligned buffers: rank-order bits around the copy boundaries") {
  // Buffers at different offsets modulo 64 on each rank (copy_bytes' vector loop against
  // memcpy, single copy's congruent scratch), 1 MiB slots: one element past the one-step size,
  // a count whose slices straddle copy_bytes' 2 KiB and single copy's 64 KiB chunk, and two
  // slot pieces with a short last one. Both algorithms (single copy needs 3+ ranks), every op,
  // one dtype of each element size the copies care about (every dtype: the tests above).
  for (const bool single_copy : {false, true}) {
    for (int size = single_copy ? 4 : 2; size <= 4; size += 2) {
      INFO("single_copy " << single_copy << ", " << size << " ranks");
      const TemporaryFolder folder("runrun-shm-allreduce");
      FileBoard board(folder.path());
      expect_clean_ranks(size, [&](int rank) {
        auto group = connect_large(board, rank, size, single_copy);
        const auto counts = [&](size_t esize) {
          return std::vector<size_t>{shm::kOneStepBytes / esize + 1,
                                     (size_t{64} << 10) * static_cast<size_t>(size) / esize + 2051,
                                     group->capacity() / esize + 1021};
        };
        const auto some = [](DataType type) {
          return type == DataType::kInt8 || type == DataType::kFloat16 ||
                 type == DataType::kFloat32;
        };
        return check_every_allreduce(*group, counts, 24, some);
      });
    }
  }
}
