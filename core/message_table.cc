#include "core/message_table.h"

#include <functional>
#include <sstream>

namespace runrun {
namespace {

// Returns "" when every rank's field agrees, else the error text listing each rank's value.
template <typename Field>
std::string disagreement(const std::vector<Request>& reqs, const char* what, Field field) {
  auto first = field(reqs[0]);
  bool same = true;
  for (const Request& r : reqs) same = same && field(r) == first;
  if (same) return "";
  std::ostringstream out;
  out << "mismatched " << what << " for " << op_type_name(reqs[0].op) << " of tensor '"
      << reqs[0].name << "':";
  for (size_t rank = 0; rank < reqs.size(); ++rank) {
    out << (rank ? "," : "") << " rank " << rank << ": " << field(reqs[rank]);
  }
  out << ". Every rank must enqueue this tensor with the same " << what << ".";
  return out.str();
}

std::string op_name_of(const Request& r) { return op_type_name(r.op); }
std::string dtype_of(const Request& r) { return std::string(data_type_name(r.dtype)); }
std::string shape_of(const Request& r) { return shape_string(r.shape); }
std::string trailing_shape_of(const Request& r) {
  std::vector<int64_t> rest(r.shape.begin() + (r.shape.empty() ? 0 : 1), r.shape.end());
  return rest.empty() ? "[*]" : "[*, " + shape_string(rest).substr(1);
}
std::string reduce_op_of(const Request& r) { return std::string(reduce_op_name(r.reduce_op)); }
std::string root_of(const Request& r) { return std::to_string(r.root); }
std::string prescale_of(const Request& r) {
  std::ostringstream s;
  s << r.prescale;
  return s.str();
}
std::string postscale_of(const Request& r) {
  std::ostringstream s;
  s << r.postscale;
  return s.str();
}

std::string first_error(const std::vector<Request>& reqs,
                        std::initializer_list<std::pair<const char*,
                                                        std::string (*)(const Request&)>> checks) {
  for (const auto& [what, field] : checks) {
    std::string error = disagreement(reqs, what, field);
    if (!error.empty()) return error;
  }
  return "";
}

}  // namespace

Response build_response(const std::string& name, const std::vector<Request>& reqs) {
  Response response;
  const Request& first = reqs[0];
  response.name = name;
  response.op = first.op;
  response.dtype = first.dtype;
  response.shape = first.shape;
  response.reduce_op = first.reduce_op;
  response.prescale = first.prescale;
  response.postscale = first.postscale;
  response.root = first.root;

  std::string error = first_error(reqs, {{"op", op_name_of}});
  if (error.empty()) {
    switch (first.op) {
      case OpType::kAllreduce:
      case OpType::kReducescatter:
        error = first_error(reqs, {{"dtype", dtype_of},
                                   {"shape", shape_of},
                                   {"reduce op", reduce_op_of},
                                   {"prescale factor", prescale_of},
                                   {"postscale factor", postscale_of}});
        break;
      case OpType::kAllgather:
      case OpType::kAlltoall:
        error = first_error(reqs, {{"dtype", dtype_of}, {"shape (all but the first dimension)",
                                                         trailing_shape_of}});
        break;
      case OpType::kBroadcast:
        error = first_error(reqs, {{"dtype", dtype_of}, {"shape", shape_of}, {"root rank", root_of}});
        break;
      case OpType::kBarrier:
      case OpType::kJoin:
        break;
    }
  }
  if (!error.empty()) {
    response.error_code = ErrorCode::kMismatch;
    response.error = error;
    return response;
  }
  if (first.op == OpType::kAllgather) {
    for (const Request& r : reqs) response.first_dims.push_back(r.shape.empty() ? 1 : r.shape[0]);
  }
  if (first.op == OpType::kAlltoall) {  // every rank's splits, rank-major
    for (const Request& r : reqs) {
      response.first_dims.insert(response.first_dims.end(), r.splits.begin(), r.splits.end());
    }
  }
  return response;
}

void MessageTable::add(int rank, Request request) {
  std::string name = request.name;
  Row& row = rows_[name];
  if (row.by_rank.empty()) {
    row.by_rank.resize(static_cast<size_t>(size_));
    row.first_seen = std::chrono::steady_clock::now();
  }
  auto& slot = row.by_rank[static_cast<size_t>(rank)];
  if (!slot) ++row.count;
  slot = std::move(request);
  if (row.count == size_) completed_.push_back(name);
}

std::vector<Response> MessageTable::take_completed() {
  std::vector<Response> responses;
  for (const std::string& name : completed_) {
    auto it = rows_.find(name);
    std::vector<Request> reqs;
    for (auto& r : it->second.by_rank) reqs.push_back(std::move(*r));
    responses.push_back(runrun::build_response(name, reqs));
    rows_.erase(it);
  }
  completed_.clear();
  return responses;
}

std::vector<MessageTable::Waiting> MessageTable::waiting() const {
  std::vector<Waiting> out;
  auto now = std::chrono::steady_clock::now();
  for (const auto& [name, row] : rows_) {
    Waiting w{name, {}, now - row.first_seen};
    for (size_t rank = 0; rank < row.by_rank.size(); ++rank) {
      if (!row.by_rank[rank]) w.missing_ranks.push_back(static_cast<int>(rank));
    }
    out.push_back(std::move(w));
  }
  return out;
}

}  // namespace runrun
