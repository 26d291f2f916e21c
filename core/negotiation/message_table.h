#pragma once
// Why: the coordinator's memory. Requests for a tensor arrive from ranks over several rounds;
// once every rank of the set asked for it (ranks that have joined count as asking, with zeros),
// the table checks that they agree (op, dtype, shape, reduce op, scale factors, root) and turns
// them into one Response, or into an error response whose text names the tensor, the op and
// each rank's value. Members of a grouped op are released together, once all are complete.
// Thread-safety: owned by the coordinator's background thread.

#include <chrono>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/negotiation/message.h"

namespace runrun {

class MessageTable {
 public:
  explicit MessageTable(int size) : size_(size) {}

  // Marks the start of a coordinator round, whose requests all arrived by now (requests of
  // later rounds count as late). The round's time dates its requests: one clock read a round.
  void begin_round() {
    ++round_;
    round_time_ = std::chrono::steady_clock::now();
  }
  // Records `request` from `rank`. A tensor whose last request arrived becomes complete; a join
  // request may complete every tensor the other ranks were waiting for.
  void add(int rank, Request request);
  // Responses for every tensor completed since the last call, in completion order.
  std::vector<Response> take_completed();

  // Tensors some ranks requested and others did not, with how long they have waited (joins,
  // which legitimately wait for the last rank, are not listed).
  struct Waiting {
    std::string name;
    std::vector<int> missing_ranks;
    std::chrono::steady_clock::duration age;
  };
  std::vector<Waiting> waiting() const;
  // Fails a waiting tensor (a stall) with `message`: its response, and those of the members of
  // its group, which cannot run either.
  std::vector<Response> fail(const std::string& name, ErrorCode code, const std::string& message);

 private:
  struct Row {
    std::vector<std::optional<Request>> by_rank;
    int count = 0;
    std::chrono::steady_clock::time_point first_seen;  // the earliest enqueue the requests tell
    uint64_t first_round = 0;
    std::vector<int64_t> late;
  };
  void check_complete(const std::string& name);
  Response respond(const std::string& name, Row& row);
  static std::vector<int64_t> late_ranks(const Row& row,
                                         const std::vector<std::pair<int, Request>>& reqs);

  int size_;
  std::map<std::string, Row> rows_;
  std::vector<std::string> completed_;
  std::set<int> joined_;  // ranks whose join is pending
  int last_joined_ = -1;
  uint64_t round_ = 0;
  std::chrono::steady_clock::time_point round_time_ = std::chrono::steady_clock::now();
  struct GroupState {
    std::vector<Response> held;  // complete members waiting for the rest
    int32_t seen = 0;            // members released or held so far
    ErrorCode code = ErrorCode::kOk;
    std::string error;  // set once a member failed: the rest fail with it
  };
  void release(Response response, const std::string& group, int32_t group_size,
               std::vector<Response>& out);
  void fail_waiting_members(const std::string& group, GroupState& state,
                            std::vector<Response>& out);
  std::map<std::string, GroupState> groups_;
};

// Checks that the requests agree and builds the response. `by_rank` pairs each requesting
// rank with its request (ranks that joined are absent). Exposed for tests.
Response build_response(const std::string& name,
                        const std::vector<std::pair<int, Request>>& by_rank);
// The same with ranks 0..n-1.
Response build_response(const std::string& name, const std::vector<Request>& by_rank);

}  // namespace runrun
