// A rank program for the hierarchical allreduce test (hierarchical_netns.sh): started by
// `runrun --hierarchical-allreduce` (mpi or gloo) on network-namespace hosts, it checks that
// the flag reached it (RUNRUN_HIERARCHICAL_ALLREDUCE=1 and the runtime's Config), makes the
// job's backend as the runtime does (make_backend with the knob on) and checks that it is the
// hierarchical one with a host group of local_size and a cross group of cross_size ranks, then
// that its allreduce gives exact results for every dtype and op, in place and out of place,
// for counts below, at and far above the local size (uneven slices, many shared-memory pieces),
// and the same bits on every rank for values whose float sum depends on the order. Prints
// "HIER ok rank=R local=L cross=C" or "HIER FAILED: ..." (exit 1).

#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include "common/data_type.h"
#include "ops/cpu/half.h"
#include "common/reduce_op.h"
#include "core/runtime/config.h"
#include "ops/backend_factory.h"
#include "ops/hierarchical/hierarchical_backend.h"

using runrun::DataType;
using runrun::ReduceOp;

namespace {

[[noreturn]] void die(int rank, const std::string& what) {
  std::printf("HIER FAILED: rank %d: %s\n", rank, what.c_str());
  std::fflush(stdout);
  std::_Exit(1);
}

// Small integers (1..3; bool 0/1): sums, products and extremes over 4 ranks are exact in every
// dtype whatever the order of the reduction.
double value_of(int rank, size_t i, DataType type) {
  if (type == DataType::kBool) return static_cast<double>((static_cast<size_t>(rank) + i) % 2);
  return static_cast<double>(1 + (static_cast<size_t>(rank) * 7 + i) % 3);
}

void store(char* at, DataType type, double v) {
  switch (type) {
    case DataType::kUInt8: {
      auto x = static_cast<uint8_t>(v);
      std::memcpy(at, &x, 1);
      break;
    }
    case DataType::kInt8: {
      auto x = static_cast<int8_t>(v);
      std::memcpy(at, &x, 1);
      break;
    }
    case DataType::kBool: {
      auto x = static_cast<uint8_t>(v != 0);
      std::memcpy(at, &x, 1);
      break;
    }
    case DataType::kInt16: {
      auto x = static_cast<int16_t>(v);
      std::memcpy(at, &x, 2);
      break;
    }
    case DataType::kInt32: {
      auto x = static_cast<int32_t>(v);
      std::memcpy(at, &x, 4);
      break;
    }
    case DataType::kInt64: {
      auto x = static_cast<int64_t>(v);
      std::memcpy(at, &x, 8);
      break;
    }
    case DataType::kFloat16: {
      auto x = runrun::cpu::float_to_half(static_cast<float>(v));
      std::memcpy(at, &x, 2);
      break;
    }
    case DataType::kBFloat16: {
      auto x = runrun::cpu::float_to_bfloat16(static_cast<float>(v));
      std::memcpy(at, &x, 2);
      break;
    }
    case DataType::kFloat32: {
      auto x = static_cast<float>(v);
      std::memcpy(at, &x, 4);
      break;
    }
    case DataType::kFloat64:
      std::memcpy(at, &v, 8);
      break;
  }
}

double combine(double a, double b, ReduceOp op, DataType type) {
  switch (op) {
    case ReduceOp::kSum:
      return type == DataType::kBool ? static_cast<double>(a + b > 0) : a + b;
    case ReduceOp::kMin:
      return std::min(a, b);
    case ReduceOp::kMax:
      return std::max(a, b);
    case ReduceOp::kProduct:
      return a * b;
    default:
      return 0;
  }
}

void check_exact(runrun::Backend& backend, DataType type, ReduceOp op, size_t count,
                 bool in_place) {
  const size_t esize = runrun::element_size(type);
  const int rank = backend.rank();
  std::vector<char> in(count * esize), out(count * esize), want(count * esize);
  for (size_t i = 0; i < count; ++i) {
    store(&in[i * esize], type, value_of(rank, i, type));
    double expected = value_of(0, i, type);
    for (int r = 1; r < backend.size(); ++r)
      expected = combine(expected, value_of(r, i, type), op, type);
    store(&want[i * esize], type, expected);
  }
  if (in_place) {
    backend.allreduce(in.data(), in.data(), count, type, op);
    out = in;
  } else {
    backend.allreduce(in.data(), out.data(), count, type, op);
  }
  if (std::memcmp(out.data(), want.data(), out.size()) != 0) {
    size_t at = 0;
    while (out[at] == want[at]) ++at;
    die(rank, std::string(runrun::data_type_name(type)) + " " +
                  std::string(runrun::reduce_op_name(op)) + " of " + std::to_string(count) +
                  (in_place ? " in place" : " out of place") + ": element " +
                  std::to_string(at / esize) + " differs from the exact result");
  }
}

// Values whose float32 sum depends on the order: every rank must still get the same bits.
void check_same_bits(runrun::Backend& backend) {
  const size_t count = 100003;
  std::vector<float> data(count);
  for (size_t i = 0; i < count; ++i) {
    data[i] = 1.0f / static_cast<float>(i + 1 + static_cast<size_t>(backend.rank()) * 13);
  }
  backend.allreduce(data.data(), data.data(), count, DataType::kFloat32, ReduceOp::kSum);
  std::vector<float> first(data);
  backend.broadcast(first.data(), count * sizeof(float), 0);
  if (std::memcmp(first.data(), data.data(), count * sizeof(float)) != 0) {
    die(backend.rank(), "a float32 sum of 100003 elements differs from rank 0's bits");
  }
}

}  // namespace

int main() {
  int rank = -1;
  try {
    const char* knob = std::getenv("RUNRUN_HIERARCHICAL_ALLREDUCE");
    const auto config = runrun::Config::load();
    runrun::BackendOptions options;
    options.name = config.backend;
    options.collective_timeout = config.collective_timeout;
    options.hierarchical_allreduce = config.hierarchical_allreduce;
    auto backend = runrun::make_backend(options);
    rank = backend->rank();
    if (knob == nullptr || std::string(knob) != "1" || !config.hierarchical_allreduce) {
      die(rank,
          "RUNRUN_HIERARCHICAL_ALLREDUCE is not 1 (--hierarchical-allreduce did not reach "
          "the rank)");
    }
    auto* hierarchical = dynamic_cast<runrun::HierarchicalBackend*>(backend.get());
    if (hierarchical == nullptr) die(rank, "make_backend did not return the hierarchical backend");
    const auto& t = backend->topology();
    if (hierarchical->local().size() != t.local_size ||
        hierarchical->cross().size() != t.cross_size) {
      die(rank, "host group of " + std::to_string(hierarchical->local().size()) +
                    " and cross group of " + std::to_string(hierarchical->cross().size()) +
                    " ranks, expected " + std::to_string(t.local_size) + " and " +
                    std::to_string(t.cross_size));
    }
    const ReduceOp ops[] = {ReduceOp::kSum, ReduceOp::kMin, ReduceOp::kMax, ReduceOp::kProduct};
    const size_t counts[] = {1, 3, 1000, 65539, (size_t{1} << 20) + 3};
    for (int k = 0; k < runrun::kNumDataTypes; ++k) {
      for (const ReduceOp op : ops) {
        for (const size_t count : counts) {
          check_exact(*backend, static_cast<DataType>(k), op, count, count % 2 == 1);
        }
        check_exact(*backend, static_cast<DataType>(k), op, 1000, true);
      }
    }
    check_same_bits(*backend);
    backend->barrier();
    std::printf("HIER ok rank=%d local=%d cross=%d backend=%s\n", rank,
                hierarchical->local().size(), hierarchical->cross().size(),
                std::string(backend->name()).c_str());
    std::fflush(stdout);
  } catch (const std::exception& e) {
    die(rank, e.what());
  }
  return 0;
}
