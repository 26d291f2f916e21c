// The data collectives of the conformance suite (control channel, topology, subgroups:
// backend_conformance_control.cc).

#include "tests/support/backend_conformance.h"

#include <cstring>
#include <functional>
#include <string>

#include "common/errors.h"
#include "tests/support/backend_conformance_values.h"

namespace runrun::conformance {
namespace {

std::string describe(const char* op, bool in_place, ReduceOp reduce) {
  return std::string(op) + (in_place ? " (in place)" : " (out of place)") + " " +
         std::string(reduce_op_name(reduce));
}

// Element `index` of the reduction across all ranks of input_value.
int64_t reduced_value(int size, size_t index, DataType type, ReduceOp op) {
  int64_t value = input_value(0, index, type, op);
  for (int r = 1; r < size; ++r) value = combine(value, input_value(r, index, type, op), type, op);
  return value;
}

void allreduce_case(Backend& backend, DataType type, ReduceOp op, size_t count, bool in_place) {
  const int rank = backend.rank();
  auto input = make_buffer(type, count, [&](size_t i) { return input_value(rank, i, type, op); });
  auto expected = make_buffer(type, count,
                              [&](size_t i) { return reduced_value(backend.size(), i, type, op); });
  std::vector<char> output(input.size(), '\x5a');
  if (in_place) {
    backend.allreduce(input.data(), input.data(), count, type, op);
    expect_equal(backend, describe("allreduce", true, op), type, input.data(), expected.data(),
                 count);
  } else {
    const auto original = input;
    backend.allreduce(input.data(), output.data(), count, type, op);
    expect_equal(backend, describe("allreduce", false, op), type, output.data(), expected.data(),
                 count);
    expect_equal(backend, "allreduce (out of place) modified its input", type, input.data(),
                 original.data(), count);
  }
}

// Uneven per-rank element counts: grow with the rank; with `holes`, odd ranks send nothing.
std::vector<size_t> uneven_counts(int size, size_t base, bool holes) {
  std::vector<size_t> counts;
  for (int r = 0; r < size; ++r) {
    const bool empty = base == 0 || (holes && r % 2 == 1);
    counts.push_back(empty ? 0 : base + static_cast<size_t>(r) * 3);
  }
  return counts;
}

void allgatherv_case(Backend& backend, DataType type, size_t base, bool holes, bool in_place) {
  const int rank = backend.rank();
  const size_t esize = element_size(type);
  const auto counts = uneven_counts(backend.size(), base, holes);
  std::vector<size_t> recv_bytes;
  size_t total = 0;
  size_t my_offset = 0;
  for (int r = 0; r < backend.size(); ++r) {
    if (r == rank) my_offset = total;
    recv_bytes.push_back(counts[static_cast<size_t>(r)] * esize);
    total += counts[static_cast<size_t>(r)];
  }
  std::vector<char> expected(total * esize + 1);
  size_t offset = 0;
  for (int r = 0; r < backend.size(); ++r) {
    for (size_t i = 0; i < counts[static_cast<size_t>(r)]; ++i) {
      store(type, expected.data(), offset + i, input_value(r, i, type, ReduceOp::kSum));
    }
    offset += counts[static_cast<size_t>(r)];
  }
  const size_t mine = counts[static_cast<size_t>(rank)];
  auto input =
      make_buffer(type, mine, [&](size_t i) { return input_value(rank, i, type, ReduceOp::kSum); });
  std::vector<char> output(total * esize + 1, '\x5a');
  const void* send = input.data();
  if (in_place) {
    std::memcpy(output.data() + my_offset * esize, input.data(), mine * esize);
    send = output.data() + my_offset * esize;
  }
  backend.allgatherv(send, mine * esize, output.data(), recv_bytes);
  const std::string what =
      std::string(in_place ? "allgatherv (in place)" : "allgatherv (out of place)") +
      (holes ? " with empty ranks" : "") + " base " + std::to_string(base);
  expect_equal(backend, what, type, output.data(), expected.data(), total);
}

}  // namespace

// For a reduction the backend does not offer (Options::reduces): true after checking that
// `start` throws UnsupportedError.
template <typename Start>
bool refused(Backend& backend, const Options& options, DataType type, ReduceOp op,
             const std::string& what, Start start) {
  if (!options.reduces || options.reduces(type, op)) return false;
  bool threw = false;
  try {
    start();
  } catch (const UnsupportedError&) {
    threw = true;
  }
  expect_true(backend, threw,
              what + " " + std::string(reduce_op_name(op)) + " of " +
                  std::string(data_type_name(type)) + ": not offered, but no UnsupportedError");
  return true;
}

void check_allreduce(Backend& backend, const Options& options) {
  for (DataType type : kAllTypes) {
    for (ReduceOp op : kAllOps) {
      std::vector<char> one(8);
      if (refused(backend, options, type, op, "allreduce", [&] {
            backend.start_allreduce(cpu_buffer(one.data()), cpu_buffer(one.data()), 1, type, op);
          })) {
        continue;
      }
      for (size_t count : options.sizes) {
        allreduce_case(backend, type, op, count, false);
        allreduce_case(backend, type, op, count, true);
      }
    }
  }
  if (options.large_count > 0) {
    allreduce_case(backend, DataType::kFloat32, ReduceOp::kSum, options.large_count, false);
    allreduce_case(backend, DataType::kFloat32, ReduceOp::kSum, options.large_count, true);
  }
}

void check_allgatherv(Backend& backend, const Options& options) {
  for (DataType type : kByteTypes) {
    for (size_t base : options.sizes) {
      for (bool holes : {false, true}) {
        allgatherv_case(backend, type, base, holes, false);
        allgatherv_case(backend, type, base, holes, true);
      }
    }
  }
}

void check_broadcast(Backend& backend, const Options& options) {
  const int rank = backend.rank();
  for (DataType type : kByteTypes) {
    for (size_t count : options.sizes) {
      for (int root = 0; root < backend.size(); ++root) {
        auto expected = make_buffer(
            type, count, [&](size_t i) { return input_value(root, i, type, ReduceOp::kSum); });
        std::vector<char> buffer = expected;
        if (rank != root) std::fill(buffer.begin(), buffer.end(), '\x5a');
        backend.broadcast(buffer.data(), count * element_size(type), root);
        expect_equal(backend, "broadcast from root " + std::to_string(root), type, buffer.data(),
                     expected.data(), count);
      }
    }
  }
}

void check_alltoallv(Backend& backend, const Options& options) {
  const int size = backend.size();
  const int me = backend.rank();
  // Elements rank `from` sends to rank `to`: uneven, and none on some pairs.
  auto pair_count = [](size_t base, int from, int to) -> size_t {
    if (base == 0 || (from + 2 * to) % 3 == 0) return 0;
    return base + static_cast<size_t>(from) * 2 + static_cast<size_t>(to);
  };
  auto pair_value = [size](int from, int to, size_t i, DataType type) {
    return input_value(from * size + to, i, type, ReduceOp::kSum);
  };
  for (DataType type : kByteTypes) {
    const size_t esize = element_size(type);
    for (size_t base : options.sizes) {
      std::vector<size_t> send_bytes;
      std::vector<size_t> recv_bytes;
      std::vector<char> input(1);
      std::vector<char> expected(1);
      for (int peer = 0; peer < size; ++peer) {
        const size_t out_count = pair_count(base, me, peer);
        const size_t in_count = pair_count(base, peer, me);
        send_bytes.push_back(out_count * esize);
        recv_bytes.push_back(in_count * esize);
        auto block =
            make_buffer(type, out_count, [&](size_t i) { return pair_value(me, peer, i, type); });
        input.insert(input.end() - 1, block.begin(), block.end() - 1);
        auto want =
            make_buffer(type, in_count, [&](size_t i) { return pair_value(peer, me, i, type); });
        expected.insert(expected.end() - 1, want.begin(), want.end() - 1);
      }
      std::vector<char> output(expected.size(), '\x5a');
      backend.alltoallv(input.data(), send_bytes, output.data(), recv_bytes);
      expect_equal(backend, "alltoallv base " + std::to_string(base), type, output.data(),
                   expected.data(), (expected.size() - 1) / esize);
    }
  }
}

// The same pointer for input and output where one side moves nothing (a rank that only sends
// or only receives; adasum's exchange back up its tree is one): it is not in place. Rank 1
// sends to rank 0, rank 0 receives, the buffers coincide on every rank; a second exchange right
// after catches a rank that sent its receive sizes (Open MPI's libnbc reads equal pointers as
// MPI_IN_PLACE).
static void check_alltoallv_one_sided(Backend& backend) {
  const int size = backend.size();
  const int me = backend.rank();
  if (size < 2) return;
  for (int round = 0; round < 2; ++round) {
    std::vector<size_t> send_bytes(static_cast<size_t>(size), 0);
    std::vector<size_t> recv_bytes(static_cast<size_t>(size), 0);
    const size_t bytes = 6 + static_cast<size_t>(round) * 10;
    if (me == 1) send_bytes[0] = bytes;
    if (me == 0) recv_bytes[1] = bytes;
    std::vector<char> buffer(bytes, me == 1 ? static_cast<char>('a' + round) : '\x5a');
    backend.alltoallv(buffer.data(), send_bytes, buffer.data(), recv_bytes);
    if (me == 0) {
      expect_true(backend, buffer == std::vector<char>(bytes, static_cast<char>('a' + round)),
                  "alltoallv with one side empty and one buffer: rank 0 did not get rank 1's "
                  "bytes (round " +
                      std::to_string(round) + ")");
    }
  }
}

void check_reducescatter(Backend& backend, const Options& options) {
  const int rank = backend.rank();
  const int size = backend.size();
  for (DataType type : kAllTypes) {
    const size_t esize = element_size(type);
    for (ReduceOp op : kAllOps) {
      std::vector<char> block(8 * static_cast<size_t>(size));
      if (refused(backend, options, type, op, "reducescatter", [&] {
            backend.start_reducescatter(cpu_buffer(block.data()), cpu_buffer(block.data()),
                                        std::vector<size_t>(static_cast<size_t>(size), 1), type,
                                        op);
          })) {
        continue;
      }
      for (size_t base : options.sizes) {
        const auto counts = uneven_counts(size, base, false);
        size_t total = 0;
        size_t my_offset = 0;
        for (int r = 0; r < size; ++r) {
          if (r == rank) my_offset = total;
          total += counts[static_cast<size_t>(r)];
        }
        const size_t mine = counts[static_cast<size_t>(rank)];
        auto input =
            make_buffer(type, total, [&](size_t i) { return input_value(rank, i, type, op); });
        auto expected = make_buffer(
            type, mine, [&](size_t i) { return reduced_value(size, my_offset + i, type, op); });
        std::vector<char> output(mine * esize + 1, '\x5a');
        backend.reducescatter(input.data(), output.data(), counts, type, op);
        expect_equal(backend,
                     describe("reducescatter", false, op) + " base " + std::to_string(base), type,
                     output.data(), expected.data(), mine);
        backend.reducescatter(input.data(), input.data(), counts, type, op);
        expect_equal(backend, describe("reducescatter", true, op) + " base " + std::to_string(base),
                     type, input.data(), expected.data(), mine);
      }
    }
  }
}

void run_all(Backend& backend, const Options& options) {
  check_topology(backend);
  check_barrier(backend);
  check_allreduce(backend, options);
  check_allgatherv(backend, options);
  check_broadcast(backend, options);
  check_alltoallv(backend, options);
  check_alltoallv_one_sided(backend);
  check_reducescatter(backend, options);
  check_adasum(backend, options);
  check_control_channel(backend);
  if (options.subgroups) check_subgroups(backend, options);
  check_barrier(backend);
}

}  // namespace runrun::conformance
