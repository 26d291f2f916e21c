#pragma once
// Why: every backend validates the same collective arguments the same way, with the same
// messages, before it touches the transport (a bad argument must fail on the calling rank
// without leaving peers waiting in a half-entered collective wherever the check is the same on
// every rank). Also the small size arithmetic the backends share.
// Thread-safety: pure functions.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "common/data_type.h"
#include "common/reduce_op.h"
#include "ops/backend.h"

namespace runrun::backend_checks {

// Throws UnsupportedError unless `device` is host memory (canonical_device is kDLCPU): what a
// CPU transport (mpi, gloo, local) calls for every buffer of a collective. The message names
// the op, the rank, the backend and the device.
void check_cpu_device(const Backend& backend, const char* collective, DLDevice device);
inline void check_cpu_devices(const Backend& backend, const char* collective, DLDevice a,
                              DLDevice b) {
  check_cpu_device(backend, collective, a);
  check_cpu_device(backend, collective, b);
}

// Throws InvalidArgumentError unless `op` is a backend reduction (not kAverage).
void check_reduce_op(const Backend& backend, const char* collective, ReduceOp op);

// Throws InvalidArgumentError unless root is a rank of the group.
void check_root(const Backend& backend, const char* collective, int root);

// Throws InvalidArgumentError unless sizes.size() == group size.
void check_per_rank(const Backend& backend, const char* collective, const char* what,
                    size_t entries);

// allgatherv: recv_bytes has one entry per rank and recv_bytes[rank] == send_bytes.
void check_allgatherv(const Backend& backend, size_t send_bytes,
                      const std::vector<size_t>& recv_bytes);

// create_subgroup: throws InvalidArgumentError unless `ranks` is non-empty, sorted, unique and
// within the group.
void check_subgroup_ranks(const Backend& backend, const std::vector<int>& ranks);
// The same for a control channel's subgroup: `op` names the call, `rank`/`size` the channel's.
void check_subgroup_ranks(const char* op, int rank, int size, const std::vector<int>& ranks);

// A hash of a subgroup's rank list, so that ranks can check cheaply (one AND-allreduce of
// (h, ~h)) that they all passed the same list.
uint64_t ranks_fingerprint(const std::vector<int>& ranks);

size_t total(const std::vector<size_t>& sizes);

// Whether [a, a+a_bytes) and [b, b+b_bytes) share a byte.
bool overlaps(const void* a, size_t a_bytes, const void* b, size_t b_bytes);

// "[1, 2, 3]" for messages and signatures.
std::string to_string(const std::vector<size_t>& sizes);

}  // namespace runrun::backend_checks
