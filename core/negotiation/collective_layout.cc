#include "core/negotiation/collective_layout.h"

namespace runrun {

size_t elements_per_row(const std::vector<int64_t>& shape) {
  size_t elements = 1;
  for (size_t d = 1; d < shape.size(); ++d) elements *= static_cast<size_t>(shape[d]);
  return elements;
}

AllgatherLayout allgather_layout(const std::vector<int64_t>& shape, DataType type,
                                 const std::vector<int64_t>& first_dims) {
  const size_t row_bytes = elements_per_row(shape) * element_size(type);
  AllgatherLayout layout;
  int64_t rows = 0;
  for (int64_t dim : first_dims) {
    layout.recv_bytes.push_back(static_cast<size_t>(dim) * row_bytes);
    rows += dim;
  }
  layout.out_shape = shape;
  layout.out_shape[0] = rows;
  return layout;
}

AlltoallLayout alltoall_layout(const std::vector<int64_t>& shape, DataType type,
                               const std::vector<int64_t>& splits, int rank, int size) {
  const size_t row_bytes = elements_per_row(shape) * element_size(type);
  AlltoallLayout layout;
  int64_t rows = 0;
  for (int p = 0; p < size; ++p) {
    const int64_t to_p = splits[static_cast<size_t>(rank * size + p)];
    const int64_t from_p = splits[static_cast<size_t>(p * size + rank)];
    layout.send_bytes.push_back(static_cast<size_t>(to_p) * row_bytes);
    layout.recv_bytes.push_back(static_cast<size_t>(from_p) * row_bytes);
    layout.received.push_back(from_p);
    rows += from_p;
  }
  layout.out_shape = shape;
  layout.out_shape[0] = rows;
  return layout;
}

ReducescatterLayout reducescatter_layout(const std::vector<int64_t>& shape, int rank, int size) {
  const size_t row_elements = elements_per_row(shape);
  const int64_t dim0 = shape.empty() ? 1 : shape[0];
  auto rows_of = [&](int p) { return dim0 / size + (p < dim0 % size ? 1 : 0); };
  ReducescatterLayout layout;
  for (int p = 0; p < size; ++p) {
    layout.recv_counts.push_back(static_cast<size_t>(rows_of(p)) * row_elements);
  }
  layout.out_shape = shape;
  if (!shape.empty()) layout.out_shape[0] = rows_of(rank);
  return layout;
}

}  // namespace runrun
