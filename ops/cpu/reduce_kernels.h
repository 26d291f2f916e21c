#pragma once
// Why: every CPU-side reduction of the runtime (the local backend, MPI user-defined ops for
// float16/bfloat16/bool, the average's division) runs through these kernels, so each dtype
// and op has exactly one definition of its arithmetic. The loops are written so GCC -O2/-O3
// auto-vectorizes them (no aliasing, no branches in the loop body).
// Thread-safety: pure functions over caller-owned buffers; concurrent calls on disjoint buffers
// are safe.
//
// Semantics:
// - Integers wrap on overflow (two's complement), as MPI's predefined ops do.
// - float16/bfloat16 are converted to float32, reduced, and rounded back per element.
// - Min/Max on floats compare with `<`; NaN handling follows MPI's predefined ops (unspecified
//   which operand wins), so callers must not rely on it.
// - bool (1 byte, any non-zero is true; results are 0 or 1): Sum and Max are logical or, Min and
//   Product logical and.

#include <cstddef>
#include <cstdint>

#include "common/data_type.h"
#include "common/reduce_op.h"

namespace runrun::cpu {

// accumulator[i] = op(accumulator[i], input[i]) for i < count. The buffers must not overlap
// (or be identical). Throws InvalidArgumentError for ReduceOp::kAverage (the core turns an
// average into a sum plus divide_buffer) and for an unknown dtype.
void reduce_into(void* accumulator, const void* input, size_t count, DataType type, ReduceOp op);

// out[i] = op(a[i], b[i]) for i < count: the same arithmetic as reduce_into(a, b) written to
// `out`, so a reduction can land where it is wanted without a copy (the shared-memory allreduce
// reduces straight into the caller's buffer). `out` may be identical to `a` or to `b`;
// otherwise no two buffers may overlap. Throws as reduce_into does.
void reduce_to(void* out, const void* a, const void* b, size_t count, DataType type, ReduceOp op);

// buffer[i] *= factor. float16/bfloat16 via float32, float32 multiplies by (float)factor,
// float64 by factor. Integers become value * factor computed in double and truncated toward
// zero, as Horovod scales integer buffers (0.5 * 7 -> 3, 0.5 * -7 -> -3), clamped to the
// type's range; a NaN product becomes 0. Throws InvalidArgumentError for bool.
void scale_buffer(void* buffer, size_t count, DataType type, double factor);

// buffer[i] /= divisor, the average of floats after a sum: value / divisor (float16/bfloat16
// via float32); integers use truncating integer division (the core averages integers through
// scale_buffer instead, as Horovod does). Throws InvalidArgumentError
// for bool and for divisor <= 0.
void divide_buffer(void* buffer, size_t count, DataType type, int64_t divisor);

}  // namespace runrun::cpu
