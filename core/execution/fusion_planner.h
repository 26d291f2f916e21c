#pragma once
// Why: many small gradients cost one collective each unless fused. Given the round's agreed
// responses (identical on every rank), this groups fusable allreduces — same device, dtype,
// reduce op, scale factors and joined ranks — into buckets of at most `threshold` bytes.
// Planning is a pure function of the responses, so every rank plans the same buckets without
// talking.
// Thread-safety: pure function.

#include <cstddef>
#include <vector>

#include "core/negotiation/message.h"
#include "core/negotiation/response_list.h"

namespace runrun {

struct FusionBucket {
  std::vector<size_t> members;  // indices into the responses, in response order
  size_t bytes = 0;
  bool fused() const { return members.size() > 1; }
};

// Buckets in the order of their first member. A tensor larger than the threshold, an error
// response and every non-allreduce op get a bucket of their own. threshold 0 disables fusion.
std::vector<FusionBucket> plan_fusion(const ResponseList& responses, size_t threshold);

// Bytes of the tensor a response describes (allreduce/broadcast shape).
size_t response_bytes(const Response& response);

}  // namespace runrun
