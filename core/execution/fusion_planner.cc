#include "core/execution/fusion_planner.h"

#include <cstdint>
#include <map>
#include <tuple>

#include "core/runtime/tensor.h"

namespace runrun {

size_t response_bytes(const Response& response) {
  return num_elements(response.shape) * element_size(response.dtype);
}

namespace {

// Whether `a` and `b` go into one bucket: the fields of plan_fusion's key, compared in place.
bool same_bucket_key(const Response& a, const Response& b) {
  return a.device.device_type == b.device.device_type && a.device.device_id == b.device.device_id &&
         a.dtype == b.dtype && a.reduce_op == b.reduce_op && a.prescale == b.prescale &&
         a.postscale == b.postscale && a.joined_ranks == b.joined_ranks;
}

}  // namespace

std::vector<FusionBucket> plan_fusion(const ResponseList& responses, size_t threshold) {
  // Joined ranks are part of the key: they change what a member's average divides by. So is the
  // device (type, id): one fusion buffer, one collective and one DeviceOps serve one device.
  using Key = std::tuple<int, int, DataType, ReduceOp, double, double, std::vector<int64_t>>;
  std::vector<FusionBucket> buckets;
  std::map<Key, size_t> open;  // key -> index of the bucket still accepting members
  // The bucket the last fusable response went into: a round's tensors mostly share one key
  // (one dtype, op and scale), and comparing with its first member needs no key.
  size_t last = SIZE_MAX;
  for (size_t i = 0; i < responses.size(); ++i) {
    const Response& r = responses[i];
    size_t bytes = response_bytes(r);
    bool fusable = r.ok() && r.op == OpType::kAllreduce && threshold > 0 && bytes <= threshold;
    if (!fusable) {
      buckets.push_back(FusionBucket{{i}, bytes});
      continue;
    }
    if (last != SIZE_MAX && buckets[last].bytes + bytes <= threshold &&
        same_bucket_key(responses[buckets[last].members[0]], r)) {
      buckets[last].members.push_back(i);
      buckets[last].bytes += bytes;
      continue;
    }
    Key key{static_cast<int>(r.device.device_type),
            r.device.device_id,
            r.dtype,
            r.reduce_op,
            r.prescale,
            r.postscale,
            r.joined_ranks};
    auto it = open.find(key);
    if (it != open.end() && buckets[it->second].bytes + bytes <= threshold) {
      last = it->second;
      buckets[last].members.push_back(i);
      buckets[last].bytes += bytes;
      continue;
    }
    last = buckets.size();
    open[key] = last;
    buckets.push_back(FusionBucket{{i}, bytes});
  }
  return buckets;
}

}  // namespace runrun
