// The byte counts and output shapes of allgather, alltoall and reducescatter
// (core/negotiation/collective_layout.h), which the host executor and the NCCL path share.
#include <catch2/catch.hpp>

#include "core/negotiation/collective_layout.h"

using namespace runrun;

TEST_CASE("allgather layout: every rank's rows, bytes by the row size of the dtype") {
  const auto layout = allgather_layout({2, 3, 4}, DataType::kFloat64, {2, 0, 5});
  CHECK(layout.recv_bytes == std::vector<size_t>{2 * 12 * 8, 0, 5 * 12 * 8});
  CHECK(layout.out_shape == std::vector<int64_t>{7, 3, 4});
}

TEST_CASE("alltoall layout: rank-major splits, what this rank sends and receives") {
  // 3 ranks; rank p sends splits[p * 3 + q] rows to rank q.
  const std::vector<int64_t> splits{1, 2, 3,   // rank 0
                                    4, 0, 6,   // rank 1
                                    7, 8, 9};  // rank 2
  const auto layout = alltoall_layout({5, 2}, DataType::kInt32, splits, 1, 3);
  CHECK(layout.send_bytes == std::vector<size_t>{4 * 8, 0, 6 * 8});
  CHECK(layout.recv_bytes == std::vector<size_t>{2 * 8, 0, 8 * 8});
  CHECK(layout.received == std::vector<int64_t>{2, 0, 8});
  CHECK(layout.out_shape == std::vector<int64_t>{10, 2});
}

TEST_CASE("reducescatter layout: the first rows % size ranks get one row more") {
  const auto layout = reducescatter_layout({7, 3}, 2, 3);
  CHECK(layout.recv_counts == std::vector<size_t>{9, 6, 6});
  CHECK(layout.out_shape == std::vector<int64_t>{2, 3});
  const auto first = reducescatter_layout({7, 3}, 0, 3);
  CHECK(first.out_shape == std::vector<int64_t>{3, 3});
  const auto scalar = reducescatter_layout({}, 0, 2);  // a scalar: one row, to rank 0
  CHECK(scalar.recv_counts == std::vector<size_t>{1, 0});
  CHECK(scalar.out_shape.empty());
}
