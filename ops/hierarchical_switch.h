#pragma once
// Why: the autotuner (core/autotune/autotuner.h) tries hierarchical allreduce on and off at run
// time,
// but core/ may not name a concrete backend (docs/architecture.md, Layers). A backend whose
// allreduce can switch between its hierarchical and its flat form implements this; the core
// finds it with dynamic_cast on the Backend it was given.
// Threading contract: the backend's driving thread only; every rank switches before the same
// collective (the core guarantees that as for any collective argument).

namespace runrun {

class HierarchicalSwitch {
 public:
  virtual ~HierarchicalSwitch() = default;
  virtual void set_hierarchical(bool enabled) = 0;
  virtual bool hierarchical() const = 0;
};

}  // namespace runrun
