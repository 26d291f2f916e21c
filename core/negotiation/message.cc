#include "core/negotiation/message.h"

#include <bit>

namespace runrun {

const char* op_type_name(OpType op) {
  switch (op) {
    case OpType::kAllreduce:
      return "allreduce";
    case OpType::kAllgather:
      return "allgather";
    case OpType::kBroadcast:
      return "broadcast";
    case OpType::kBarrier:
      return "barrier";
    case OpType::kAlltoall:
      return "alltoall";
    case OpType::kReducescatter:
      return "reducescatter";
    case OpType::kJoin:
      return "join";
    case OpType::kProcessSetAdd:
      return "add_process_set";
    case OpType::kProcessSetRemove:
      return "remove_process_set";
    case OpType::kNotice:
      return "notice";
    case OpType::kStallShutdown:
      return "stall shutdown";
  }
  return "unknown";
}

OpType op_type_from_int(int value) {
  if (value < 0 || value > static_cast<int>(OpType::kStallShutdown)) {
    throw InternalError(RUNRUN_WHERE, "malformed negotiation message: op code " +
                                          std::to_string(value) +
                                          " (are all ranks running the same runrun version?)");
  }
  return static_cast<OpType>(value);
}

std::string shape_string(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

bool Request::negotiates_like(const Request& other) const {
  // Cheapest and likeliest differences first; the name is usually equal (the cache's key).
  // Scale factors compare bitwise, as on the wire (NaN equals NaN, 0.0 differs from -0.0).
  return op == other.op && dtype == other.dtype && shape == other.shape &&
         same_device(device, other.device) && reduce_op == other.reduce_op &&
         std::bit_cast<uint64_t>(prescale) == std::bit_cast<uint64_t>(other.prescale) &&
         std::bit_cast<uint64_t>(postscale) == std::bit_cast<uint64_t>(other.postscale) &&
         root == other.root && group_size == other.group_size && splits == other.splits &&
         group == other.group && name == other.name;
}

void Request::encode(WireWriter& out) const {
  out.str(name);
  out.u8(static_cast<uint8_t>(op));
  out.i32(static_cast<int32_t>(dtype));
  out.i64s(shape);
  out.device(device);
  out.i32(static_cast<int32_t>(reduce_op));
  out.f64(prescale);
  out.f64(postscale);
  out.i32(root);
  out.i64s(splits);
  out.str(group);
  out.i32(group_size);
  out.i64(waited_us);
}

Request Request::decode(WireReader& in) {
  Request r;
  r.name = in.str();
  r.op = op_type_from_int(in.u8());
  r.dtype = data_type_from_int(in.i32());
  r.shape = in.i64s();
  r.device = in.device();
  r.reduce_op = reduce_op_from_int(in.i32());
  r.prescale = in.f64();
  r.postscale = in.f64();
  r.root = in.i32();
  r.splits = in.i64s();
  r.group = in.str();
  r.group_size = in.i32();
  r.waited_us = in.i64();
  return r;
}

void Response::encode(WireWriter& out) const {
  out.u8(static_cast<uint8_t>(op));
  out.str(name);
  out.i32(static_cast<int32_t>(dtype));
  out.i64s(shape);
  out.device(device);
  out.i32(static_cast<int32_t>(reduce_op));
  out.f64(prescale);
  out.f64(postscale);
  out.i32(root);
  out.i64s(first_dims);
  out.i64s(joined_ranks);
  out.i64s(late_ranks);
  out.i32(static_cast<int32_t>(error_code));
  out.str(error);
}

Response Response::decode(WireReader& in) {
  Response r;
  r.op = op_type_from_int(in.u8());
  r.name = in.str();
  r.dtype = data_type_from_int(in.i32());
  r.shape = in.i64s();
  r.device = in.device();
  r.reduce_op = reduce_op_from_int(in.i32());
  r.prescale = in.f64();
  r.postscale = in.f64();
  r.root = in.i32();
  r.first_dims = in.i64s();
  r.joined_ranks = in.i64s();
  r.late_ranks = in.i64s();
  r.error_code = static_cast<ErrorCode>(in.i32());
  r.error = in.str();
  return r;
}

template <typename T>
static std::string encode_list(const std::vector<T>& items) {
  WireWriter w;
  w.i64(static_cast<int64_t>(items.size()));
  for (const auto& item : items) item.encode(w);
  return w.take();
}

template <typename T>
static std::vector<T> decode_list(const std::string& bytes) {
  if (bytes.empty()) return {};
  WireReader r(bytes);
  int64_t n = r.i64();
  std::vector<T> items;
  items.reserve(static_cast<size_t>(n > 0 ? n : 0));
  for (int64_t i = 0; i < n; ++i) items.push_back(T::decode(r));
  return items;
}

std::string encode_requests(const std::vector<Request>& requests) { return encode_list(requests); }
std::vector<Request> decode_requests(const std::string& bytes) {
  return decode_list<Request>(bytes);
}
std::string encode_responses(const std::vector<Response>& responses) {
  return encode_list(responses);
}
std::vector<Response> decode_responses(const std::string& bytes) {
  return decode_list<Response>(bytes);
}

}  // namespace runrun
