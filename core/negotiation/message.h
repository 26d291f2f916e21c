#pragma once
// Why: the two negotiation messages. A Request is what one rank says about one tensor it
// enqueued ("allreduce 'grad.w', float32, [256, 10], sum"); a Response is the coordinator's
// verdict for a tensor every rank requested: run it (with the agreed parameters) or fail it on
// every rank with the given error. Both are plain values with a wire encoding.
// Thread-safety: plain values.

#include <cstdint>
#include <string>
#include <vector>

#include "common/data_type.h"
#include "common/errors.h"
#include "common/reduce_op.h"
#include "core/negotiation/wire.h"
#include "ops/device.h"

namespace runrun {

enum class OpType : uint8_t {
  kAllreduce = 0,
  kAllgather = 1,
  kBroadcast = 2,
  kBarrier = 3,
  kAlltoall = 4,
  kReducescatter = 5,
  kJoin = 6,
  kProcessSetAdd = 7,     // collective over the global set; ranks in Request::splits
  kProcessSetRemove = 8,  // collective over the global set; the set id in Request::root
  kNotice = 9,            // coordinator -> every rank: log Response::error as a warning
  kStallShutdown = 10,    // coordinator -> every rank: a stall outlived RUNRUN_STALL_SHUTDOWN_TIME;
                          // the set's runtime stops with Response::error (as Horovod's does)
};

const char* op_type_name(OpType op);
// Throws InternalError for codes outside the enum (a malformed message).
OpType op_type_from_int(int value);

struct Request {
  std::string name;
  OpType op = OpType::kAllreduce;
  DataType dtype = DataType::kFloat32;
  std::vector<int64_t> shape;
  // The tensor's device (canonical): ranks must agree, and it is part of the signature.
  DLDevice device = kCpuDevice;
  ReduceOp reduce_op = ReduceOp::kSum;
  double prescale = 1.0;
  double postscale = 1.0;
  int32_t root = -1;            // broadcast
  std::vector<int64_t> splits;  // alltoall: rows sent to each rank; process set: its ranks
  // Grouped ops: every member names the group and its size; the coordinator releases a group
  // only when all its members are ready on every rank, so they execute together.
  std::string group;
  int32_t group_size = 0;
  // How long the op had waited on its rank when this request was sent (not in the signature).
  int64_t waited_us = 0;

  // Whether `other` would get the same response: every field but waited_us is equal. What the
  // response cache compares (local to a rank: allgather's first dimension is part of it).
  bool negotiates_like(const Request& other) const;
  void encode(WireWriter& out) const;
  static Request decode(WireReader& in);
};

struct Response {
  OpType op = OpType::kAllreduce;
  std::string name;
  DataType dtype = DataType::kFloat32;
  std::vector<int64_t> shape;    // agreed shape (allreduce, broadcast); rank 0's otherwise
  DLDevice device = kCpuDevice;  // agreed device: the fusion planner never mixes devices
  ReduceOp reduce_op = ReduceOp::kSum;
  double prescale = 1.0;
  double postscale = 1.0;
  int32_t root = -1;
  // allgather: first dimension of each rank; alltoall: every rank's splits, rank-major.
  std::vector<int64_t> first_dims;
  // Ranks that have joined (uneven data) and contribute zeros to this allreduce; the average
  // divides by the ranks that did not. For kJoin, `root` holds the last rank to join.
  std::vector<int64_t> joined_ranks;
  // Ranks whose request reached the coordinator in a later round than the first one (for the
  // timeline: who made the others wait).
  std::vector<int64_t> late_ranks;
  ErrorCode error_code = ErrorCode::kOk;
  std::string error;  // non-empty: fail this op on every rank with this text

  bool ok() const { return error_code == ErrorCode::kOk; }
  void encode(WireWriter& out) const;
  static Response decode(WireReader& in);
};

std::string encode_requests(const std::vector<Request>& requests);
std::vector<Request> decode_requests(const std::string& bytes);
std::string encode_responses(const std::vector<Response>& responses);
std::vector<Response> decode_responses(const std::string& bytes);

// "[2, 3]" for messages.
std::string shape_string(const std::vector<int64_t>& shape);

}  // namespace runrun
