#include "ops/algorithms/barrier.h"

namespace runrun::algorithms {

void barrier_dissemination(StepTransport& transport) {
  const int n = transport.size();
  const int me = transport.rank();
  char token = 1;
  char received = 0;
  for (int d = 1; d < n; d *= 2) {
    transport.step({{(me + d) % n, &token, 1}}, {{(me - d + n) % n, &received, 1}});
  }
}

}  // namespace runrun::algorithms
