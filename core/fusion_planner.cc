#include "core/fusion_planner.h"

#include <map>
#include <tuple>

#include "core/tensor.h"

namespace runrun {

size_t response_bytes(const Response& response) {
  return num_elements(response.shape) * element_size(response.dtype);
}

std::vector<FusionBucket> plan_fusion(const ResponseList& responses, size_t threshold) {
  // Joined ranks are part of the key: they change what a member's average divides by. So is the
  // device (type, id): one fusion buffer, one collective and one DeviceOps serve one device.
  using Key = std::tuple<int, int, DataType, ReduceOp, double, double, std::vector<int64_t>>;
  std::vector<FusionBucket> buckets;
  std::map<Key, size_t> open;  // key -> index of the bucket still accepting members
  for (size_t i = 0; i < responses.size(); ++i) {
    const Response& r = responses[i];
    size_t bytes = response_bytes(r);
    bool fusable = r.ok() && r.op == OpType::kAllreduce && threshold > 0 && bytes <= threshold;
    if (!fusable) {
      buckets.push_back(FusionBucket{{i}, bytes});
      continue;
    }
    Key key{static_cast<int>(r.device.device_type), r.device.device_id, r.dtype, r.reduce_op,
            r.prescale, r.postscale, r.joined_ranks};
    auto it = open.find(key);
    if (it != open.end() && buckets[it->second].bytes + bytes <= threshold) {
      buckets[it->second].members.push_back(i);
      buckets[it->second].bytes += bytes;
      continue;
    }
    open[key] = buckets.size();
    buckets.push_back(FusionBucket{{i}, bytes});
  }
  return buckets;
}

}  // namespace runrun
