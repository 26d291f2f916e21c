#include "ops/backend.h"

#include <string>

#include "common/errors.h"

namespace runrun {

void Backend::unsupported(std::string_view op) const {
  throw UnsupportedError(RUNRUN_WHERE, std::string(op) + " is not supported by the " +
                                           std::string(name()) +
                                           " backend: choose another backend (RUNRUN_BACKEND)");
}

void Backend::allreduce(const void*, void*, size_t, DataType, ReduceOp) { unsupported("allreduce"); }
void Backend::allgatherv(const void*, size_t, void*, const std::vector<size_t>&) {
  unsupported("allgather");
}
void Backend::broadcast(void*, size_t, int) { unsupported("broadcast"); }
void Backend::alltoallv(const void*, const std::vector<size_t>&, void*,
                        const std::vector<size_t>&) {
  unsupported("alltoall");
}
void Backend::reducescatter(const void*, void*, const std::vector<size_t>&, DataType, ReduceOp) {
  unsupported("reducescatter");
}
void Backend::barrier() { unsupported("barrier"); }
std::unique_ptr<Backend> Backend::create_subgroup(const std::vector<int>&) {
  unsupported("process sets (create_subgroup)");
}

}  // namespace runrun
