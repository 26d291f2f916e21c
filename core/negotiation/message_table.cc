#include "core/negotiation/message_table.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <system_error>
#include <utility>

namespace runrun {
namespace {

using RankedRequests = std::vector<std::pair<int, Request>>;

// One field the ranks must agree on: how to compare it (directly: the coordinator checks every
// field of every request of every uncached tensor) and how to print it (only for the error).
struct FieldCheck {
  const char* what;
  bool (*same)(const Request& a, const Request& b);
  std::string (*text)(const Request& r);
};

// Returns "" when every rank's field agrees, else the error text listing each rank's value.
std::string disagreement(const RankedRequests& reqs, const FieldCheck& check) {
  const Request& first = reqs[0].second;
  bool same = true;
  for (const auto& [rank, r] : reqs) same = same && check.same(r, first);
  if (same) return "";
  std::string out = std::string("mismatched ") + check.what + " for " + op_type_name(first.op) +
                    " of tensor '" + first.name + "':";
  for (size_t i = 0; i < reqs.size(); ++i) {
    out += std::string(i ? "," : "") + " rank " + std::to_string(reqs[i].first) + ": " +
           check.text(reqs[i].second);
  }
  return out + ". Every rank must enqueue this tensor with the same " + check.what + ".";
}

// The shortest text that reads back as `v` (so two values that differ never print the same).
std::string number(double v) {
  char buffer[32];
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof(buffer), v);
  return ec == std::errc() ? std::string(buffer, end) : std::to_string(v);
}
// Scale factors must be equal, as Horovod requires; a NaN agrees with a NaN.
bool same_number(double a, double b) { return a == b || (std::isnan(a) && std::isnan(b)); }

// The kind of device: each rank drives its own GPU (cuda:<local_rank>, as in Horovod), so ranks
// agree on "cuda", not on the index.
std::string device_of(const Request& r) {
  return r.device.device_type == kDLCUDA ? "cuda" : device_string(r.device);
}
std::string trailing_shape_of(const Request& r) {
  std::vector<int64_t> rest(r.shape.begin() + (r.shape.empty() ? 0 : 1), r.shape.end());
  return rest.empty() ? "[*]" : "[*, " + shape_string(rest).substr(1);
}
bool same_trailing_shape(const Request& a, const Request& b) {
  auto rest = [](const Request& r) { return r.shape.begin() + (r.shape.empty() ? 0 : 1); };
  return std::equal(rest(a), a.shape.end(), rest(b), b.shape.end());
}
std::string group_of(const Request& r) {
  return r.group.empty() ? "none" : r.group + " of " + std::to_string(r.group_size);
}

const FieldCheck kOp{"op", [](const Request& a, const Request& b) { return a.op == b.op; },
                     [](const Request& r) -> std::string { return op_type_name(r.op); }};
const FieldCheck kGroup{"group",
                        [](const Request& a, const Request& b) {
                          return a.group == b.group &&
                                 (a.group.empty() || a.group_size == b.group_size);
                        },
                        group_of};
const FieldCheck kDevice{"device",
                         [](const Request& a, const Request& b) {
                           const bool a_cuda = a.device.device_type == kDLCUDA;
                           const bool b_cuda = b.device.device_type == kDLCUDA;
                           return a_cuda || b_cuda ? a_cuda == b_cuda
                                                   : device_of(a) == device_of(b);
                         },
                         device_of};
const FieldCheck kDtype{"dtype",
                        [](const Request& a, const Request& b) { return a.dtype == b.dtype; },
                        [](const Request& r) { return std::string(data_type_name(r.dtype)); }};
const FieldCheck kShape{"shape",
                        [](const Request& a, const Request& b) { return a.shape == b.shape; },
                        [](const Request& r) { return shape_string(r.shape); }};
const FieldCheck kTrailingShape{"shape (all but the first dimension)", same_trailing_shape,
                                trailing_shape_of};
const FieldCheck kReduceOp{
    "reduce op", [](const Request& a, const Request& b) { return a.reduce_op == b.reduce_op; },
    [](const Request& r) { return std::string(reduce_op_name(r.reduce_op)); }};
const FieldCheck kPrescale{
    "prescale factor",
    [](const Request& a, const Request& b) { return same_number(a.prescale, b.prescale); },
    [](const Request& r) { return number(r.prescale); }};
const FieldCheck kPostscale{
    "postscale factor",
    [](const Request& a, const Request& b) { return same_number(a.postscale, b.postscale); },
    [](const Request& r) { return number(r.postscale); }};
const FieldCheck kRoot{"root rank",
                       [](const Request& a, const Request& b) { return a.root == b.root; },
                       [](const Request& r) { return std::to_string(r.root); }};
const FieldCheck kRanks{"ranks",
                        [](const Request& a, const Request& b) { return a.splits == b.splits; },
                        [](const Request& r) { return shape_string(r.splits); }};
const FieldCheck kProcessSetId{"process set id", kRoot.same, kRoot.text};

std::string first_error(const RankedRequests& reqs, std::initializer_list<FieldCheck> checks) {
  for (const FieldCheck& check : checks) {
    std::string error = disagreement(reqs, check);
    if (!error.empty()) return error;
  }
  return "";
}

std::string check_agreement(const RankedRequests& reqs) {
  std::string error = first_error(reqs, {kOp, kGroup});
  if (!error.empty()) return error;
  switch (reqs[0].second.op) {
    case OpType::kAllreduce:
    case OpType::kReducescatter:
      return first_error(reqs, {kDevice, kDtype, kShape, kReduceOp, kPrescale, kPostscale});
    case OpType::kAllgather:
    case OpType::kAlltoall:
      return first_error(reqs, {kDevice, kDtype, kTrailingShape});
    case OpType::kBroadcast:
      return first_error(reqs, {kDevice, kDtype, kShape, kRoot});
    case OpType::kProcessSetAdd:
      return first_error(reqs, {kRanks});
    case OpType::kNotice:
    case OpType::kStallShutdown:
      return "";
    case OpType::kProcessSetRemove:
      return first_error(reqs, {kProcessSetId});
    case OpType::kBarrier:
    case OpType::kJoin:
      return "";
  }
  return "";
}

}  // namespace

Response build_response(const std::string& name, const RankedRequests& reqs) {
  Response response;
  const Request& first = reqs[0].second;
  response.name = name;
  response.op = first.op;
  response.dtype = first.dtype;
  response.shape = first.shape;
  response.device = first.device;
  response.reduce_op = first.reduce_op;
  response.prescale = first.prescale;
  response.postscale = first.postscale;
  response.root = first.root;
  std::string error = check_agreement(reqs);
  if (!error.empty()) {
    response.error_code = ErrorCode::kMismatch;
    response.error = error;
    return response;
  }
  if (first.op == OpType::kAllgather) {
    for (const auto& [rank, r] : reqs) {
      response.first_dims.push_back(r.shape.empty() ? 1 : r.shape[0]);
    }
  }
  if (first.op == OpType::kAlltoall) {  // every rank's splits, rank-major
    for (const auto& [rank, r] : reqs) {
      response.first_dims.insert(response.first_dims.end(), r.splits.begin(), r.splits.end());
    }
  }
  return response;
}

Response build_response(const std::string& name, const std::vector<Request>& by_rank) {
  RankedRequests ranked;
  for (size_t i = 0; i < by_rank.size(); ++i) ranked.emplace_back(static_cast<int>(i), by_rank[i]);
  return build_response(name, ranked);
}

void MessageTable::add(int rank, Request request) {
  const bool is_join = request.op == OpType::kJoin;
  std::string name = request.name;
  Row& row = rows_[name];
  // When the earliest rank enqueued it, as far as the requests tell: a tensor that waited on
  // the cache path before it came here (Controller) is as old as its wait.
  const auto enqueued =
      round_time_ - std::chrono::microseconds(std::max<int64_t>(0, request.waited_us));
  if (row.by_rank.empty()) {
    row.by_rank.resize(static_cast<size_t>(size_));
    row.first_seen = enqueued;
    row.first_round = round_;
  } else {
    row.first_seen = std::min(row.first_seen, enqueued);
  }
  auto& slot = row.by_rank[static_cast<size_t>(rank)];
  if (!slot && round_ > row.first_round) row.late.push_back(rank);
  if (!slot) ++row.count;
  slot = std::move(request);
  if (is_join) {
    joined_.insert(rank);
    last_joined_ = rank;
    std::vector<std::string> names;
    for (const auto& [n, r] : rows_) names.push_back(n);
    for (const std::string& n : names) check_complete(n);
  } else {
    check_complete(name);
  }
}

void MessageTable::check_complete(const std::string& name) {
  auto it = rows_.find(name);
  if (it == rows_.end()) return;
  const Row& row = it->second;
  int present = row.count;
  for (int rank : joined_) present += row.by_rank[static_cast<size_t>(rank)] ? 0 : 1;
  bool is_join = false;
  for (const auto& r : row.by_rank) is_join = is_join || (r && r->op == OpType::kJoin);
  bool complete = is_join ? row.count == size_ : present >= size_ && row.count > 0;
  if (complete && std::find(completed_.begin(), completed_.end(), name) == completed_.end()) {
    completed_.push_back(name);
  }
}

// Ranks that made the others wait: those whose request came in a later coordinator round, and
// those that had waited far less than the longest-waiting rank (more than 1 ms and half less).
std::vector<int64_t> MessageTable::late_ranks(const Row& row, const RankedRequests& reqs) {
  std::vector<int64_t> late = row.late;
  int64_t longest = 0;
  for (const auto& [rank, r] : reqs) longest = std::max(longest, r.waited_us);
  for (const auto& [rank, r] : reqs) {
    bool waited_little = longest - r.waited_us > 1000 && r.waited_us < longest / 2;
    if (waited_little && std::find(late.begin(), late.end(), rank) == late.end()) {
      late.push_back(rank);
    }
  }
  std::sort(late.begin(), late.end());
  return late;
}

Response MessageTable::respond(const std::string& name, Row& row) {
  RankedRequests reqs;
  std::vector<int64_t> missing;
  for (size_t rank = 0; rank < row.by_rank.size(); ++rank) {
    if (row.by_rank[rank]) {
      reqs.emplace_back(static_cast<int>(rank), std::move(*row.by_rank[rank]));
    } else {
      missing.push_back(static_cast<int64_t>(rank));
    }
  }
  Response response = build_response(name, reqs);
  response.late_ranks = late_ranks(row, reqs);
  if (response.op == OpType::kJoin) {
    response.root = last_joined_;
    joined_.clear();
    last_joined_ = -1;
  } else if (!missing.empty() && response.ok()) {
    if (response.op == OpType::kAllreduce) {
      response.joined_ranks = missing;
    } else {
      // A mismatch (a HorovodInternalError in Python), as Horovod's "... is not supported with
      // Join": the joined ranks ran join while these ran another op.
      response.error_code = ErrorCode::kMismatch;
      response.error = std::string(op_type_name(response.op)) + " of tensor '" + name +
                       "' while ranks " + shape_string(missing) +
                       " have joined: only allreduce may run while ranks are joined, as in "
                       "Horovod (see docs/collectives.md); finish it before join() or after "
                       "every rank joined";
    }
  }
  return response;
}

std::vector<Response> MessageTable::take_completed() {
  std::vector<Response> responses;
  std::vector<std::string> names = std::exchange(completed_, {});
  for (const std::string& name : names) {
    auto it = rows_.find(name);
    if (it == rows_.end()) continue;  // failed with its group meanwhile
    // The group any rank put the tensor in: when ranks disagree (a mismatch), the group that
    // some rank waits on must still fail as a whole.
    std::string group;
    int32_t group_size = 0;
    for (const auto& r : it->second.by_rank) {
      if (r && !r->group.empty()) {
        group = r->group;
        group_size = r->group_size;
        break;
      }
    }
    Response response = respond(name, it->second);
    rows_.erase(it);
    release(std::move(response), group, group_size, responses);
  }
  return responses;
}

// Group members wait for each other; an error in one fails the whole group at once (held
// members now, later members as they complete), so no rank waits for a group that cannot run.
void MessageTable::release(Response response, const std::string& group, int32_t group_size,
                           std::vector<Response>& out) {
  if (group.empty() || group_size <= 1) {
    out.push_back(std::move(response));
    return;
  }
  GroupState& state = groups_[group];
  ++state.seen;
  if (!response.ok() && state.error.empty()) {
    state.error = "grouped op failed: member '" + response.name + "': " + response.error;
    state.code = response.error_code;
    for (Response& held : state.held) {
      held.error_code = state.code;
      held.error = state.error;
      out.push_back(std::move(held));
    }
    state.held.clear();
    fail_waiting_members(group, state, out);
  }
  if (!state.error.empty()) {
    if (response.ok()) {
      response.error_code = state.code;
      response.error = state.error;
    }
    out.push_back(std::move(response));
  } else {
    state.held.push_back(std::move(response));
    if (static_cast<int32_t>(state.held.size()) == group_size) {
      for (Response& member : state.held) out.push_back(std::move(member));
      state.held.clear();
    }
  }
  if (state.seen == group_size) groups_.erase(group);
}

// Members of a failed group that some ranks are still waiting for fail now, on the ranks that
// submitted them, instead of waiting for ranks that may never submit them.
void MessageTable::fail_waiting_members(const std::string& group, GroupState& state,
                                        std::vector<Response>& out) {
  for (auto it = rows_.begin(); it != rows_.end();) {
    const Request* member = nullptr;
    for (const auto& r : it->second.by_rank) member = member ? member : (r ? &*r : nullptr);
    if (!member || member->group != group) {
      ++it;
      continue;
    }
    Response failed;
    failed.name = it->first;
    failed.op = member->op;
    failed.error_code = state.code;
    failed.error = state.error;
    out.push_back(std::move(failed));
    ++state.seen;
    std::erase(completed_, it->first);
    it = rows_.erase(it);
  }
}

std::vector<Response> MessageTable::fail(const std::string& name, ErrorCode code,
                                         const std::string& message) {
  std::vector<Response> out;
  auto it = rows_.find(name);
  if (it == rows_.end()) return out;
  Response failed;
  failed.name = name;
  failed.error_code = code;
  failed.error = message;
  std::string group;
  int32_t group_size = 0;
  for (const auto& r : it->second.by_rank) {
    if (!r) continue;
    failed.op = r->op;
    group = r->group;
    group_size = r->group_size;
    break;
  }
  rows_.erase(it);
  std::erase(completed_, name);
  release(std::move(failed), group, group_size, out);
  return out;
}

std::vector<MessageTable::Waiting> MessageTable::waiting() const {
  std::vector<Waiting> out;
  auto now = std::chrono::steady_clock::now();
  for (const auto& [name, row] : rows_) {
    Waiting w{name, {}, now - row.first_seen};
    bool is_join = false;
    for (size_t rank = 0; rank < row.by_rank.size(); ++rank) {
      if (!row.by_rank[rank]) w.missing_ranks.push_back(static_cast<int>(rank));
      is_join = is_join || (row.by_rank[rank] && row.by_rank[rank]->op == OpType::kJoin);
    }
    if (!is_join) out.push_back(std::move(w));
  }
  return out;
}

}  // namespace runrun
