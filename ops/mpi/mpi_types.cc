#include "ops/mpi/mpi_types.h"

#include <array>
#include <mutex>
#include <string>

#include "common/errors.h"
#include "ops/cpu/reduce_kernels.h"

namespace runrun::mpi {
namespace {

// MPI user function: inout[i] = in[i] op inout[i], computed by the cpu kernel.
template <DataType Type, ReduceOp Op>
void kernel_op(void* in, void* inout, int* len, MPI_Datatype* /*datatype*/) {
  cpu::reduce_into(inout, in, static_cast<size_t>(*len), Type, Op);
}

constexpr std::array kOps = {ReduceOp::kSum, ReduceOp::kMin, ReduceOp::kMax, ReduceOp::kProduct};

struct Registry {
  MPI_Datatype two_bytes = MPI_DATATYPE_NULL;
  std::array<MPI_Datatype, kMaxBlockLog2 + 1> blocks{};
  // [0]: float16, [1]: bfloat16, [2]: bool; each indexed like kOps.
  std::array<std::array<MPI_Op, 4>, 3> user_ops{};
};

template <DataType Type>
std::array<MPI_Op, 4> create_user_ops() {
  std::array<MPI_Op, 4> ops{};
  MPI_Op_create(&kernel_op<Type, ReduceOp::kSum>, 1, &ops[0]);
  MPI_Op_create(&kernel_op<Type, ReduceOp::kMin>, 1, &ops[1]);
  MPI_Op_create(&kernel_op<Type, ReduceOp::kMax>, 1, &ops[2]);
  MPI_Op_create(&kernel_op<Type, ReduceOp::kProduct>, 1, &ops[3]);
  return ops;
}

const Registry& registry() {
  static Registry registry;
  static std::once_flag once;
  std::call_once(once, [] {
    MPI_Type_contiguous(2, MPI_BYTE, &registry.two_bytes);
    MPI_Type_commit(&registry.two_bytes);
    for (int log2 = 0; log2 <= kMaxBlockLog2; ++log2) {
      MPI_Type_contiguous(1 << log2, MPI_BYTE, &registry.blocks[static_cast<size_t>(log2)]);
      MPI_Type_commit(&registry.blocks[static_cast<size_t>(log2)]);
    }
    registry.user_ops[0] = create_user_ops<DataType::kFloat16>();
    registry.user_ops[1] = create_user_ops<DataType::kBFloat16>();
    registry.user_ops[2] = create_user_ops<DataType::kBool>();
  });
  return registry;
}

size_t op_index(ReduceOp op) {
  for (size_t i = 0; i < kOps.size(); ++i) {
    if (kOps[i] == op) return i;
  }
  throw InvalidArgumentError(RUNRUN_WHERE, "mpi: reduce op " + std::string(reduce_op_name(op)) +
                                               " has no MPI_Op: use sum, min, max or product");
}

MPI_Op native_op(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum:
      return MPI_SUM;
    case ReduceOp::kMin:
      return MPI_MIN;
    case ReduceOp::kMax:
      return MPI_MAX;
    case ReduceOp::kProduct:
      return MPI_PROD;
    case ReduceOp::kAverage:
    case ReduceOp::kAdasum:
      break;
  }
  op_index(op);  // throws
  return MPI_OP_NULL;
}

}  // namespace

MPI_Datatype datatype_for(DataType type) {
  switch (type) {
    case DataType::kUInt8:
      return MPI_UINT8_T;
    case DataType::kInt8:
      return MPI_INT8_T;
    case DataType::kInt16:
      return MPI_INT16_T;
    case DataType::kInt32:
      return MPI_INT32_T;
    case DataType::kInt64:
      return MPI_INT64_T;
    case DataType::kFloat16:
    case DataType::kBFloat16:
      return registry().two_bytes;
    case DataType::kFloat32:
      return MPI_FLOAT;
    case DataType::kFloat64:
      return MPI_DOUBLE;
    case DataType::kBool:
      return MPI_UINT8_T;
  }
  throw InvalidArgumentError(
      RUNRUN_WHERE, "mpi: unknown data type code " + std::to_string(static_cast<int>(type)));
}

MPI_Op op_for(DataType type, ReduceOp op) {
  switch (type) {
    case DataType::kFloat16:
      return registry().user_ops[0][op_index(op)];
    case DataType::kBFloat16:
      return registry().user_ops[1][op_index(op)];
    case DataType::kBool:
      return registry().user_ops[2][op_index(op)];
    default:
      return native_op(op);
  }
}

MPI_Datatype byte_block_type(int log2) {
  if (log2 < 0 || log2 > kMaxBlockLog2) {
    throw InternalError(RUNRUN_WHERE,
                        "mpi: byte block 2^" + std::to_string(log2) + " out of range");
  }
  return registry().blocks[static_cast<size_t>(log2)];
}

}  // namespace runrun::mpi
