#pragma once
// Why: a barrier in ceil(log2 N) steps of one byte (dissemination: in the step of distance d
// a rank signals rank + d and waits for rank - d), where the direct exchange costs N-1
// messages per rank. The Gloo backend's barrier beyond a few ranks (issue 40).
// Threading contract: the rank's one driving thread; collective over the transport's ranks.

#include "ops/algorithms/step_transport.h"

namespace runrun::algorithms {

// Returns once every rank has entered it.
void barrier_dissemination(StepTransport& transport);

}  // namespace runrun::algorithms
