// The raw side under `runrun --gloo`: gloo's algorithm library on a context of its own (see
// bench_raw.h). The context connects through the job's rendezvous store under a prefix no
// runtime uses, on a tcp device of its own bound to the address the gloo backend would use.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <gloo/allgather.h>
#include <gloo/allreduce.h>
#include <gloo/alltoall.h>
#include <gloo/barrier.h>
#include <gloo/broadcast.h>
#include <gloo/math.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/prefix_store.h>
#include <gloo/transport/tcp/device.h>

#include "common/env_names.h"
#include "common/errors.h"
#include "ops/gloo/gloo_from_environment.h"
#include "ops/gloo/rendezvous_store.h"
#include "rendezvous/client_environment.h"
#include "tests/perf/bench_raw.h"

namespace runrun::perf {
namespace {

constexpr auto kTimeout = std::chrono::minutes(5);

int env_int(const char* name) {
  const char* text = std::getenv(name);
  RUNRUN_ENFORCE(text != nullptr && *text != '\0', InvalidArgumentError,
                 std::string(name) + " is not set: run runrun_bench under `runrun --gloo -np N`");
  return std::atoi(text);
}

class GlooRaw final : public RawComm {
 public:
  GlooRaw() {
    const int rank = env_int(env::kRank);
    const int size = env_int(env::kSize);
    auto client_options = rendezvous::client_options_from_environment();
    const char* spec = std::getenv(env::kNetworkInterface);
    ::gloo::transport::tcp::attr attr;
    attr.hostname = gloo_backend::listen_address(spec ? spec : "", client_options.host);
    auto device = ::gloo::transport::tcp::CreateDevice(attr);
    const auto get_timeout = client_options.connect_timeout;
    auto client = std::make_shared<rendezvous::RendezvousClient>(std::move(client_options));
    ops::RendezvousStore store(std::move(client), /*generation=*/0, get_timeout);
    ::gloo::rendezvous::PrefixStore scoped("runrun/bench/raw", store);
    auto context = std::make_shared<::gloo::rendezvous::Context>(rank, size);
    context->setTimeout(kTimeout);
    context->connectFullMesh(scoped, device);
    context_ = std::move(context);
  }
  std::string name() const override { return "gloo"; }
  int rank() const override { return context_->rank; }
  int size() const override { return context_->size; }

  void barrier() override {
    ::gloo::BarrierOptions opts(context_);
    opts.setTag(next_tag());
    ::gloo::barrier(opts);
  }
  double max(double value) override {
    ::gloo::AllreduceOptions opts(context_);
    opts.setOutput(&value, 1);
    opts.setReduceFunction(
        static_cast<void (*)(void*, const void*, const void*, size_t)>(&::gloo::max<double>));
    opts.setTag(next_tag());
    ::gloo::allreduce(opts);
    return value;
  }
  void allreduce_sum(float* data, size_t count) override {
    ::gloo::AllreduceOptions opts(context_);
    opts.setOutput(data, count);
    opts.setReduceFunction(
        static_cast<void (*)(void*, const void*, const void*, size_t)>(&::gloo::sum<float>));
    opts.setTag(next_tag());
    ::gloo::allreduce(opts);
  }
  void broadcast(float* data, size_t count, int root) override {
    ::gloo::BroadcastOptions opts(context_);
    opts.setOutput(data, count);
    opts.setRoot(root);
    opts.setTag(next_tag());
    ::gloo::broadcast(opts);
  }
  void allgather(const float* in, float* out, size_t per_rank) override {
    ::gloo::AllgatherOptions opts(context_);
    opts.setInput(const_cast<float*>(in), per_rank);
    opts.setOutput(out, per_rank * static_cast<size_t>(size()));
    opts.setTag(next_tag());
    ::gloo::allgather(opts);
  }
  void reducescatter_sum(const float* in, float* out, size_t per_rank) override {
    const size_t total = per_rank * static_cast<size_t>(size());
    scratch_.resize(total);
    std::memcpy(scratch_.data(), in, total * sizeof(float));
    allreduce_sum(scratch_.data(), total);
    std::memcpy(out, scratch_.data() + per_rank * static_cast<size_t>(rank()),
                per_rank * sizeof(float));
  }
  void alltoall(const float* in, float* out, size_t block) override {
    const size_t total = block * static_cast<size_t>(size());
    ::gloo::AlltoallOptions opts(context_);
    opts.setInput(const_cast<float*>(in), total);
    opts.setOutput(out, total);
    opts.setTag(next_tag());
    ::gloo::alltoall(opts);
  }

 private:
  uint32_t next_tag() { return tag_++; }

  std::shared_ptr<::gloo::Context> context_;
  uint32_t tag_ = 1;
  std::vector<float> scratch_;
};

}  // namespace

std::unique_ptr<RawComm> make_gloo_raw() { return std::make_unique<GlooRaw>(); }

}  // namespace runrun::perf
