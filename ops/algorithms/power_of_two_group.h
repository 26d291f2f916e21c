#pragma once
// Why: recursive doubling and halving-doubling run over a power-of-two group of ranks; with N
// ranks not a power of two, the first 2 * extra ranks pair up around it (an even one hands its
// data to the odd one above it, which stands for both in the group and hands the result back
// at the end: MPICH's scheme). Both algorithms, and the tests that count their messages, use
// this one layout.
// Thread-safety: a value.

namespace runrun::algorithms {

struct PowerOfTwoGroup {
  int size;     // the largest power of two <= N
  int extra;    // N - size: ranks folded into a partner
  bool folded;  // this rank stands aside (its data goes to rank + 1)
  int index;    // this rank's place in the group (when not folded)

  PowerOfTwoGroup(int rank, int ranks) {
    size = 1;
    while (size * 2 <= ranks) size *= 2;
    extra = ranks - size;
    folded = rank < 2 * extra && rank % 2 == 0;
    index = rank < 2 * extra ? rank / 2 : rank - extra;
  }

  // The rank at place `i` of the group.
  int member(int i) const { return i < extra ? 2 * i + 1 : i + extra; }

  // The steps the group's exchanges take (log2 of its size).
  int steps() const {
    int n = 0;
    for (int s = 1; s < size; s *= 2) ++n;
    return n;
  }
};

}  // namespace runrun::algorithms
