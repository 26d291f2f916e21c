#pragma once
// Why: allgather, alltoall and reducescatter have outputs whose size depends on every rank's
// input; the byte counts per rank and the output shape follow from the agreed response alone.
// The host executor (op_executor.cc) and the NCCL path (device_collectives.cc) both need them,
// computed the same way, so they are computed here once.
// Thread-safety: pure functions of their arguments.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "common/data_type.h"

namespace runrun {

// Elements in one first-dimension row (the product of the other dimensions; 1 for a scalar).
size_t elements_per_row(const std::vector<int64_t>& shape);

struct AllgatherLayout {
  std::vector<size_t> recv_bytes;  // bytes from each rank
  std::vector<int64_t> out_shape;  // the input's shape with every rank's rows
};
// `first_dims`: every rank's first dimension, in rank order (the agreed response's).
AllgatherLayout allgather_layout(const std::vector<int64_t>& shape, DataType type,
                                 const std::vector<int64_t>& first_dims);

struct AlltoallLayout {
  std::vector<size_t> send_bytes;  // to each rank
  std::vector<size_t> recv_bytes;  // from each rank
  std::vector<int64_t> received;   // rows from each rank (the received splits)
  std::vector<int64_t> out_shape;
};
// `splits`: every rank's splits, rank-major (rank p's at [p * size, (p + 1) * size)).
AlltoallLayout alltoall_layout(const std::vector<int64_t>& shape, DataType type,
                               const std::vector<int64_t>& splits, int rank, int size);

struct ReducescatterLayout {
  std::vector<size_t> recv_counts;  // elements each rank gets
  std::vector<int64_t> out_shape;   // this rank's share
};
// Uneven first dimensions: the first (rows % size) ranks get one extra row (as Horovod).
ReducescatterLayout reducescatter_layout(const std::vector<int64_t>& shape, int rank, int size);

}  // namespace runrun
