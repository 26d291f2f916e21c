#pragma once
// Why: allgatherv and alltoallv take int counts and int displacements, which overflow past
// 2 GiB of bytes. Moving bytes in blocks of the largest power of two (up to 64 KiB) that divides
// every size stretches that limit by up to 65536x without copies; a layout that still does not
// fit fails with a clear error instead of a corrupt transfer. The block size may differ between
// sender and receiver: MPI matches the underlying byte sequence.
// Thread-safety: pure functions (after mpi::ensure_initialized()).

#include <mpi.h>

#include <cstddef>
#include <vector>

namespace runrun::mpi {

struct ByteLayout {
  MPI_Datatype type = MPI_BYTE;  // a contiguous block of 2^block_log2 bytes
  int block_log2 = 0;
  std::vector<int> counts;  // per rank, in blocks
  std::vector<int> displs;  // per rank, in blocks, blocks laid out consecutively in rank order
};

// Throws InvalidArgumentError naming `op`, `rank` and `what` (e.g. "recv_bytes") when a count or
// displacement exceeds `limit` blocks.
ByteLayout make_byte_layout(const std::vector<size_t>& bytes_per_rank, size_t limit, const char* op,
                            int rank, const char* what);

}  // namespace runrun::mpi
