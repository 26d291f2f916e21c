#pragma once
// Why: the "raw" side of every comparison — the communication library's own collectives on its
// own connections, called from the benchmark's main thread while the runtime is idle — and the
// barrier and max-reduction the timing harness needs between blocks. Two implementations, one
// per launcher mode, so one program measures the runtime over either backend:
// - MPI (under mpirun / `runrun --mpi`): MPI_COMM_WORLD, the blocking MPI collectives;
// - Gloo (under `runrun --gloo`): a gloo context of its own (its own tcp device and
//   connections, found through the job's rendezvous store) and gloo's algorithm library
//   (gloo::allreduce, allgather, broadcast, alltoall, barrier), i.e. what torch.distributed's
//   gloo backend calls. gloo 0.5 has no options-style reduce-scatter: the raw reducescatter is
//   a gloo::allreduce of the whole input, then this rank's block copied out.
// Every call is collective over all ranks, in the same order on every rank.
// Thread-safety: the main thread only.

#include <cstddef>
#include <memory>
#include <string>

namespace runrun::perf {

class RawComm {
 public:
  virtual ~RawComm() = default;

  // What the raw side is, for the run header: "mpi" or "gloo".
  virtual std::string name() const = 0;
  virtual int rank() const = 0;
  virtual int size() const = 0;

  virtual void barrier() = 0;
  // The maximum of `value` over all ranks.
  virtual double max(double value) = 0;

  // float32 sum in place.
  virtual void allreduce_sum(float* data, size_t count) = 0;
  virtual void broadcast(float* data, size_t count, int root) = 0;
  // `per_rank` floats from every rank into `out` (rank order).
  virtual void allgather(const float* in, float* out, size_t per_rank) = 0;
  // `in` holds size() blocks of `per_rank`; `out` gets the sum of every rank's block rank().
  virtual void reducescatter_sum(const float* in, float* out, size_t per_rank) = 0;
  // Block p of `in` (`block` floats) goes to rank p; `out` gets block rank() of every rank.
  virtual void alltoall(const float* in, float* out, size_t block) = 0;
};

// Over MPI_COMM_WORLD; MPI must be initialized (the benchmark's main does it).
std::unique_ptr<RawComm> make_mpi_raw();

// Over a gloo context of its own, connected through the rendezvous server of `runrun --gloo`
// (rank, size and server from the launcher's environment). Throws UnsupportedError when this
// build has no Gloo.
std::unique_ptr<RawComm> make_gloo_raw();

}  // namespace runrun::perf
