#pragma once
// Why: maps runrun's dtypes and reduce ops onto MPI. uint8/int8/int16/int32/int64/float32/
// float64 use MPI's native types and ops. float16 and bfloat16 travel as a 2-byte contiguous type,
// bool as MPI_UINT8_T, and their reductions are user-defined MPI_Ops that call the cpu kernels (so
// every backend computes them the same way). Allgatherv/alltoallv move bytes in blocks of a power
// of two bytes, which stretches MPI's int counts. MPI_Op_create and type creation are per process,
// so everything is created once (after MPI is initialized), thread-safely, and lives until
// MPI_Finalize. Thread-safety: all functions may be called from any thread after
// mpi::ensure_initialized().

#include <mpi.h>

#include <cstddef>

#include "common/data_type.h"
#include "common/reduce_op.h"

namespace runrun::mpi {

MPI_Datatype datatype_for(DataType type);

// The MPI_Op reducing `type` with `op` (op is Sum/Min/Max/Product).
MPI_Op op_for(DataType type, ReduceOp op);

// Largest block size in bytes for byte transfers: 2^kMaxBlockLog2.
inline constexpr int kMaxBlockLog2 = 16;

// A contiguous type of 2^log2 bytes (0 <= log2 <= kMaxBlockLog2).
MPI_Datatype byte_block_type(int log2);

}  // namespace runrun::mpi
