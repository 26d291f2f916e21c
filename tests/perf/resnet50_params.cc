#include "tests/perf/resnet50_params.h"

#include <array>

#include "common/errors.h"

namespace runrun::perf {
namespace {

void add_conv(std::vector<ParamTensor>& out, const std::string& name, size_t out_ch, size_t in_ch,
              size_t kernel) {
  out.push_back({name + ".weight", out_ch * in_ch * kernel * kernel});
}

void add_bn(std::vector<ParamTensor>& out, const std::string& name, size_t channels) {
  out.push_back({name + ".weight", channels});
  out.push_back({name + ".bias", channels});
}

// One bottleneck block: width -> width (3x3) -> 4 * width, with a downsample on the first block.
void add_bottleneck(std::vector<ParamTensor>& out, const std::string& prefix, size_t in_ch,
                    size_t width, bool downsample) {
  const size_t out_ch = 4 * width;
  add_conv(out, prefix + ".conv1", width, in_ch, 1);
  add_bn(out, prefix + ".bn1", width);
  add_conv(out, prefix + ".conv2", width, width, 3);
  add_bn(out, prefix + ".bn2", width);
  add_conv(out, prefix + ".conv3", out_ch, width, 1);
  add_bn(out, prefix + ".bn3", out_ch);
  if (downsample) {
    add_conv(out, prefix + ".downsample.0", out_ch, in_ch, 1);
    add_bn(out, prefix + ".downsample.1", out_ch);
  }
}

}  // namespace

std::vector<ParamTensor> resnet50_parameters() {
  std::vector<ParamTensor> params;
  add_conv(params, "conv1", 64, 3, 7);
  add_bn(params, "bn1", 64);
  constexpr std::array<size_t, 4> kBlocks{3, 4, 6, 3};
  constexpr std::array<size_t, 4> kWidths{64, 128, 256, 512};
  size_t in_ch = 64;
  for (size_t stage = 0; stage < kBlocks.size(); ++stage) {
    for (size_t block = 0; block < kBlocks[stage]; ++block) {
      const std::string prefix = "layer" + std::to_string(stage + 1) + "." + std::to_string(block);
      add_bottleneck(params, prefix, in_ch, kWidths[stage], block == 0);
      in_ch = 4 * kWidths[stage];
    }
  }
  params.push_back({"fc.weight", 1000 * in_ch});
  params.push_back({"fc.bias", 1000});

  size_t total = 0;
  for (const ParamTensor& p : params) total += p.elements;
  RUNRUN_ENFORCE(params.size() == kResnet50Tensors && total == kResnet50Elements, InternalError,
                 "the ResNet-50 parameter list has " + std::to_string(params.size()) +
                     " tensors and " + std::to_string(total) + " elements; expected " +
                     std::to_string(kResnet50Tensors) + " and " +
                     std::to_string(kResnet50Elements) + " (fix tests/perf/resnet50_params.cc)");
  return params;
}

}  // namespace runrun::perf
