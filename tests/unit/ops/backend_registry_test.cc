// The registry of backend providers: what the build compiled in, and the rules of adding one.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>

#include "common/errors.h"
#include "ops/backend_catalog.h"
#include "ops/registry/backend_provider.h"

using runrun::BackendProvider;
using runrun::BackendRegistry;

TEST_CASE("the built registry holds local always and one provider per compiled-in backend") {
  const BackendRegistry& built = BackendRegistry::built();
  const auto names = built.names();
  CHECK(names.front() == "local");
  CHECK((built.find("mpi") != nullptr) == runrun::backend_built("mpi"));
  CHECK((built.find("gloo") != nullptr) == runrun::backend_built("gloo"));
  CHECK(built.find("nccl") == nullptr);
  CHECK(built.find("carrier-pigeon") == nullptr);
  for (const auto& name : names) CHECK(std::count(names.begin(), names.end(), name) == 1);
}

TEST_CASE("a provider needs a name and a factory, and a name is registered once") {
  BackendRegistry registry;
  BackendProvider provider;
  provider.name = "x";
  CHECK_THROWS_AS(registry.add(provider), runrun::InternalError);  // no factory
  provider.make = [](const runrun::BackendOptions&) { return std::unique_ptr<runrun::Backend>(); };
  registry.add(provider);
  CHECK_THROWS_WITH(registry.add(provider), Catch::Contains("registered twice"));
  provider.name = "";
  CHECK_THROWS_AS(registry.add(provider), runrun::InternalError);
  CHECK(registry.names() == std::vector<std::string>{"x"});
}

TEST_CASE("gloo says why it cannot run outside a launcher job, before trying to connect") {
  const BackendProvider* gloo = BackendRegistry::built().find("gloo");
  REQUIRE((gloo != nullptr) == runrun::backend_built("gloo"));
  if (gloo == nullptr) return;  // a build without libgloo-dev: nothing to ask
  ::unsetenv("RUNRUN_RANK");
  REQUIRE(gloo->unavailable_reason);
  CHECK_THAT(gloo->unavailable_reason(),
             Catch::Contains("RUNRUN_RANK is not set") && Catch::Contains("runrun --gloo"));
}
