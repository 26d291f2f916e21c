#include "ops/mpi/mpi_byte_layout.h"

#include <algorithm>
#include <bit>
#include <string>

#include "common/errors.h"
#include "ops/mpi/mpi_types.h"

namespace runrun::mpi {

ByteLayout make_byte_layout(const std::vector<size_t>& bytes_per_rank, size_t limit, const char* op,
                            int rank, const char* what) {
  ByteLayout layout;
  layout.block_log2 = kMaxBlockLog2;
  for (size_t bytes : bytes_per_rank) {
    if (bytes != 0) layout.block_log2 = std::min(layout.block_log2, std::countr_zero(bytes));
  }
  layout.type = byte_block_type(layout.block_log2);
  size_t offset = 0;
  for (size_t r = 0; r < bytes_per_rank.size(); ++r) {
    const size_t count = bytes_per_rank[r] >> layout.block_log2;
    const size_t displ = offset >> layout.block_log2;
    if (count > limit || displ > limit) {
      throw InvalidArgumentError(
          RUNRUN_WHERE,
          std::string(op) + " on rank " + std::to_string(rank) + ": " + what + "[" +
              std::to_string(r) + "] = " + std::to_string(bytes_per_rank[r]) + " bytes at offset " +
              std::to_string(offset) + " is " + std::to_string(count) + " blocks of " +
              std::to_string(size_t{1} << layout.block_log2) + " bytes at block " +
              std::to_string(displ) + ", over MPI's int limit of " + std::to_string(limit) +
              ": split the tensor into smaller ones, or make sizes multiples of a larger power of "
              "two");
    }
    layout.counts.push_back(static_cast<int>(count));
    layout.displs.push_back(static_cast<int>(displ));
    offset += bytes_per_rank[r];
  }
  return layout;
}

}  // namespace runrun::mpi
