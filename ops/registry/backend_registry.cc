#include <utility>

#include "common/errors.h"
#include "ops/registry/backend_provider.h"

namespace runrun {

const BackendRegistry& BackendRegistry::built() {
  static const BackendRegistry registry = [] {
    BackendRegistry filled;
    register_built_providers(filled);
    return filled;
  }();
  return registry;
}

void BackendRegistry::add(BackendProvider provider) {
  RUNRUN_ENFORCE(!provider.name.empty() && provider.make && find(provider.name) == nullptr,
                 InternalError,
                 "backend provider '" + provider.name +
                     "' is unnamed, has no factory, or is "
                     "registered twice");
  providers_.push_back(std::move(provider));
}

const BackendProvider* BackendRegistry::find(const std::string& name) const {
  for (const auto& provider : providers_) {
    if (provider.name == name) return &provider;
  }
  return nullptr;
}

std::vector<std::string> BackendRegistry::names() const {
  std::vector<std::string> names;
  for (const auto& provider : providers_) names.push_back(provider.name);
  return names;
}

}  // namespace runrun
