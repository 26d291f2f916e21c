#pragma once
// Why: both hierarchical allreduces — of CPU tensors (hierarchical_backend.h) and of CUDA
// tensors (hierarchical_device_backend.h) — group the ranks into hosts the same way and split
// the flat group the same way: one group of a host's ranks, and one group per place in a host of
// the ranks at that place on every host. One implementation of that, so both agree on what a
// host is and when the job is not a grid.
// Hosts: ranks with one cross_rank (Horovod's: the index of the rank's host when hosts hold
// consecutive or round-robin ranks); a rank's place in its host is its position in rank order.
// Threading contract: the flat backend's driving thread; collective over every rank of it.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ops/backend.h"

namespace runrun {

// This rank's two groups; both null when the job is not a hierarchy.
struct HierarchySplit {
  std::unique_ptr<Backend> local;  // the ranks of this host, in rank order
  std::unique_ptr<Backend> cross;  // one rank per host: those at this rank's place in theirs
};

// `topologies`: every rank's (cross_rank, local_size, cross_size), indexed by rank (the same on
// every rank). Splits `flat` (create_subgroup, collective) when the job is a full grid of at
// least two hosts with at least two ranks each; otherwise splits nothing, sets *why_not and
// returns empty groups (every rank decides alike). `cross_from`, when given, is split for the
// cross groups instead of `flat` (collective over it too): a backend of another transport over
// the same ranks, numbered alike (the CUDA form's MPI/Gloo stage across hosts).
HierarchySplit split_hierarchy(Backend& flat, const std::vector<int32_t>& topologies,
                               std::string* why_not, Backend* cross_from = nullptr);

}  // namespace runrun
