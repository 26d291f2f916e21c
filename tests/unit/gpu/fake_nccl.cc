// Test fixture of tests/unit/gpu: a working fake of NCCL (the entry points runrun resolves,
// ops/nccl/nccl_library.cc) over the fake CUDA runtime (fake_cuda_runtime.cc: "device" memory
// is host memory, streams are FIFO worker threads), so the NCCL data backend's logic runs on
// machines without a GPU. Communicators of one unique id are ranks of this process (threads):
// they share in-process state. Every call is enqueued on the given stream
// (cudaLaunchHostFunc) and runs there in order; a collective is a rendezvous of all ranks of the
// communicator (each deposits a copy of its input, then computes its own output from all
// copies), send/recv go through per-pair FIFO mailboxes (sends are buffered), and the calls of a
// group run as one stream item, sends first. Reductions are computed exactly as NCCL defines
// them (ncclAvg: sum / nranks, truncating for integers; a pre-multiplied sum: sum of scalar *
// x). ncclCommAbort on any rank wakes every waiting rank of its communicator, which then reports
// ncclRemoteError through ncclCommGetAsyncError (what a rank sees when a peer died); a rank that
// never arrives leaves the others waiting until they abort (the collective timeout).
// Not modelled: NCCL's real algorithms, device memory the host cannot read, NCCL's refusal of
// two ranks on one GPU, and the stream semantics of ncclCommInitRank.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <vector>

#include "ops/nccl/nccl_abi.h"
#include "tests/unit/gpu/fake_nccl_elements.h"

namespace abi = runrun::gpu::nccl_abi;

extern "C" int cudaLaunchHostFunc(CUstream_st* s, void (*fn)(void*), void* data);

namespace {

constexpr abi::Result kSystemError = 2;
constexpr abi::Result kInvalidArgument = 4;
constexpr abi::Result kRemoteError = 6;
constexpr int kFirstCustomOp = 5;

// One collective call of one rank.
struct Op {
  enum Kind { kAllReduce, kBroadcast, kAllGather, kReduce, kReduceScatter, kSend, kRecv } kind;
  const void* send = nullptr;
  void* recv = nullptr;
  size_t count = 0;
  abi::DataType type = 0;
  abi::RedOp op = 0;
  double scalar = 1.0;  // a pre-multiplied sum's
  int root = 0;         // broadcast/reduce root, send/recv peer
  uint64_t seq = 0;     // the communicator's collective number
};

struct Round {
  std::vector<std::vector<unsigned char>> inputs;
  int deposited = 0;
  int finished = 0;
};

// What the ranks of one unique id share.
struct Shared {
  int nranks = 0;
  std::mutex mutex;
  std::condition_variable changed;
  int joined = 0;
  bool aborted = false;
  std::map<uint64_t, Round> rounds;
  std::map<std::pair<int, int>, std::deque<std::vector<unsigned char>>> mailboxes;
};

std::mutex registry_mutex;
std::map<uint64_t, std::shared_ptr<Shared>> registry;

using fake_nccl::is_float;
using fake_nccl::is_signed;
using fake_nccl::load_float;
using fake_nccl::load_int;
using fake_nccl::store_float;
using fake_nccl::store_int;
using fake_nccl::type_size;

// out[i] = reduce over ranks of inputs[r][offset + i], as NCCL defines `op`.
void reduce_into(const std::vector<std::vector<unsigned char>>& inputs, size_t offset, size_t count,
                 const Op& op, unsigned char* out) {
  const size_t es = type_size(op.type);
  const int n = static_cast<int>(inputs.size());
  for (size_t i = 0; i < count; ++i) {
    const size_t at = (offset + i) * es;
    if (is_float(op.type)) {
      double acc = 0;
      for (int r = 0; r < n; ++r) {
        const double x = load_float(inputs[r].data() + at, op.type);
        if (op.op >= kFirstCustomOp) {
          acc += x * op.scalar;
        } else if (r == 0 || op.op == abi::kSum || op.op == abi::kAvg) {
          acc = r == 0 ? x : acc + x;
        } else if (op.op == abi::kProd) {
          acc *= x;
        } else if (op.op == abi::kMax) {
          acc = x > acc ? x : acc;
        } else {
          acc = x < acc ? x : acc;
        }
      }
      if (op.op == abi::kAvg) acc /= n;
      store_float(out + i * es, op.type, acc);
    } else {
      int64_t acc = 0;
      for (int r = 0; r < n; ++r) {
        int64_t x = load_int(inputs[r].data() + at, op.type);
        if (op.op >= kFirstCustomOp)
          x = static_cast<int64_t>(static_cast<uint64_t>(x) * static_cast<uint64_t>(op.scalar));
        if (r == 0) {
          acc = x;
        } else if (op.op == abi::kSum || op.op == abi::kAvg || op.op >= kFirstCustomOp) {
          acc = static_cast<int64_t>(static_cast<uint64_t>(acc) + static_cast<uint64_t>(x));
        } else if (op.op == abi::kProd) {
          acc = static_cast<int64_t>(static_cast<uint64_t>(acc) * static_cast<uint64_t>(x));
        } else if (op.op == abi::kMax) {
          acc = is_signed(op.type) ? std::max(acc, x)
                                   : static_cast<int64_t>(std::max(static_cast<uint64_t>(acc),
                                                                   static_cast<uint64_t>(x)));
        } else {
          acc = is_signed(op.type) ? std::min(acc, x)
                                   : static_cast<int64_t>(std::min(static_cast<uint64_t>(acc),
                                                                   static_cast<uint64_t>(x)));
        }
      }
      if (op.op == abi::kAvg) acc /= n;
      store_int(out + i * es, op.type, acc);
    }
  }
}

}  // namespace

struct ncclComm {
  std::shared_ptr<Shared> shared;
  int rank = 0;
  int nranks = 0;
  uint64_t next_seq = 0;  // host side, at enqueue
  std::mutex mutex;
  abi::Result async_error = abi::kSuccess;
  std::map<abi::RedOp, double> custom_ops;
  abi::RedOp next_custom = kFirstCustomOp;
};

namespace {

struct Group {
  int depth = 0;
  ncclComm* comm = nullptr;
  CUstream_st* stream = nullptr;
  std::vector<Op> ops;
};
thread_local Group group;

void set_async_error(ncclComm* comm) {
  std::lock_guard<std::mutex> lock(comm->mutex);
  comm->async_error = kRemoteError;
}

// Runs one collective of `comm` on its stream's thread; false when the communicator was
// aborted while waiting for the other ranks.
bool run_collective(ncclComm* comm, const Op& op) {
  Shared& s = *comm->shared;
  const size_t es = type_size(op.type);
  size_t in_bytes = op.count * es;
  if (op.kind == Op::kReduceScatter) in_bytes *= static_cast<size_t>(comm->nranks);
  if (op.kind == Op::kBroadcast && comm->rank != op.root) in_bytes = 0;
  std::vector<unsigned char> mine(in_bytes);
  if (in_bytes > 0) std::memcpy(mine.data(), op.send, in_bytes);
  std::unique_lock<std::mutex> lock(s.mutex);
  Round& round = s.rounds[op.seq];
  round.inputs.resize(static_cast<size_t>(s.nranks));
  round.inputs[static_cast<size_t>(comm->rank)] = std::move(mine);
  ++round.deposited;
  s.changed.notify_all();
  s.changed.wait(lock, [&] { return s.aborted || round.deposited == s.nranks; });
  if (s.aborted) return false;
  auto* out = static_cast<unsigned char*>(op.recv);
  switch (op.kind) {
    case Op::kAllReduce:
      reduce_into(round.inputs, 0, op.count, op, out);
      break;
    case Op::kReduce:
      if (comm->rank == op.root) reduce_into(round.inputs, 0, op.count, op, out);
      break;
    case Op::kReduceScatter:
      reduce_into(round.inputs, op.count * static_cast<size_t>(comm->rank), op.count, op, out);
      break;
    case Op::kBroadcast:
      std::memcpy(out, round.inputs[static_cast<size_t>(op.root)].data(), op.count * es);
      break;
    case Op::kAllGather:
      for (int r = 0; r < s.nranks; ++r) {
        std::memcpy(out + static_cast<size_t>(r) * op.count * es,
                    round.inputs[static_cast<size_t>(r)].data(), op.count * es);
      }
      break;
    default:
      break;
  }
  if (++round.finished == s.nranks) s.rounds.erase(op.seq);
  return true;
}

bool run_recv(ncclComm* comm, const Op& op) {
  Shared& s = *comm->shared;
  std::unique_lock<std::mutex> lock(s.mutex);
  auto& box = s.mailboxes[{op.root, comm->rank}];
  s.changed.wait(lock, [&] { return s.aborted || !box.empty(); });
  if (s.aborted) return false;
  std::vector<unsigned char> bytes = std::move(box.front());
  box.pop_front();
  std::memcpy(op.recv, bytes.data(), std::min(bytes.size(), op.count * type_size(op.type)));
  return true;
}

void run_send(ncclComm* comm, const Op& op) {
  Shared& s = *comm->shared;
  const auto* p = static_cast<const unsigned char*>(op.send);
  std::vector<unsigned char> bytes(p, p + op.count * type_size(op.type));
  std::lock_guard<std::mutex> lock(s.mutex);
  s.mailboxes[{comm->rank, op.root}].push_back(std::move(bytes));
  s.changed.notify_all();
}

struct Item {
  ncclComm* comm;
  std::vector<Op> ops;
};

void run_item(void* data) {
  std::unique_ptr<Item> item(static_cast<Item*>(data));
  for (const Op& op : item->ops) {
    if (op.kind == Op::kSend) run_send(item->comm, op);
  }
  for (const Op& op : item->ops) {
    if (op.kind == Op::kSend) continue;
    const bool ok =
        op.kind == Op::kRecv ? run_recv(item->comm, op) : run_collective(item->comm, op);
    if (!ok) {
      set_async_error(item->comm);
      return;
    }
  }
}

std::atomic<long> calls{0};

bool overlap(const void* a, size_t a_bytes, const void* b, size_t b_bytes) {
  const auto* x = static_cast<const char*>(a);
  const auto* y = static_cast<const char*>(b);
  return a_bytes > 0 && b_bytes > 0 && x < y + b_bytes && y < x + a_bytes;
}

// NCCL's buffer rules: input and output are the same buffer (in place: the same address, or
// for allgather/reducescatter the rank's block of the larger one) or do not overlap. A backend
// that breaks them gets ncclInvalidArgument here (real NCCL would give garbage).
bool buffers_allowed(const ncclComm* comm, const Op& op) {
  const size_t bytes = op.count * type_size(op.type);
  const size_t n = static_cast<size_t>(comm->nranks), rank = static_cast<size_t>(comm->rank);
  const char* send = static_cast<const char*>(op.send);
  const char* recv = static_cast<const char*>(op.recv);
  switch (op.kind) {
    case Op::kAllReduce:
    case Op::kBroadcast:
    case Op::kReduce:
      return send == recv || !overlap(send, bytes, recv, bytes);
    case Op::kAllGather:
      return send == recv + rank * bytes || !overlap(send, bytes, recv, bytes * n);
    case Op::kReduceScatter:
      return recv == send + rank * bytes || !overlap(send, bytes * n, recv, bytes);
    default:
      return true;
  }
}

abi::Result submit(ncclComm* comm, Op op, CUstream_st* stream) {
  if (comm == nullptr) return kInvalidArgument;
  const bool root_only_recv = op.kind == Op::kReduce && comm->rank != op.root;
  if (!root_only_recv && op.kind != Op::kBroadcast && !buffers_allowed(comm, op)) {
    return kInvalidArgument;
  }
  if (op.kind == Op::kBroadcast && comm->rank == op.root && !buffers_allowed(comm, op)) {
    return kInvalidArgument;
  }
  ++calls;
  if (op.kind != Op::kSend && op.kind != Op::kRecv) op.seq = comm->next_seq++;
  if (op.op >= kFirstCustomOp) {
    std::lock_guard<std::mutex> lock(comm->mutex);
    auto it = comm->custom_ops.find(op.op);
    if (it == comm->custom_ops.end()) return kInvalidArgument;
    op.scalar = it->second;
  }
  if (group.depth > 0) {
    group.comm = comm;
    group.stream = stream;
    group.ops.push_back(op);
    return abi::kSuccess;
  }
  cudaLaunchHostFunc(stream, run_item, new Item{comm, {op}});
  return abi::kSuccess;
}

}  // namespace

extern "C" {

// Test control: how many communication calls (collectives, sends, receives) were made so far,
// so a test can tell that an op went over NCCL rather than through staging.
long fake_nccl_calls() { return calls.load(); }

abi::Result ncclGetVersion(int* version) {
  *version = 22304;
  return abi::kSuccess;
}
const char* ncclGetErrorString(abi::Result) { return "fake NCCL error"; }

abi::Result ncclGetUniqueId(abi::UniqueId* id) {
  static std::mt19937_64 random{std::random_device{}()};
  std::lock_guard<std::mutex> lock(registry_mutex);
  const uint64_t key = random();
  std::memset(id->internal, 0, sizeof(id->internal));
  std::memcpy(id->internal, &key, sizeof(key));
  return abi::kSuccess;
}

abi::Result ncclCommInitRank(ncclComm** out, int nranks, abi::UniqueId id, int rank) {
  uint64_t key;
  std::memcpy(&key, id.internal, sizeof(key));
  std::shared_ptr<Shared> shared;
  {
    std::lock_guard<std::mutex> lock(registry_mutex);
    auto& slot = registry[key];
    if (!slot) {
      slot = std::make_shared<Shared>();
      slot->nranks = nranks;
    }
    shared = slot;
  }
  if (shared->nranks != nranks || rank < 0 || rank >= nranks) return kInvalidArgument;
  std::unique_lock<std::mutex> lock(shared->mutex);
  ++shared->joined;
  shared->changed.notify_all();
  if (!shared->changed.wait_for(lock, std::chrono::seconds(60),
                                [&] { return shared->joined >= nranks; })) {
    return kSystemError;
  }
  auto* comm = new ncclComm;  // freed never: stream items may still refer to it (a test fake)
  comm->shared = shared;
  comm->rank = rank;
  comm->nranks = nranks;
  *out = comm;
  return abi::kSuccess;
}

abi::Result ncclCommDestroy(ncclComm*) { return abi::kSuccess; }

abi::Result ncclCommAbort(ncclComm* comm) {
  std::lock_guard<std::mutex> lock(comm->shared->mutex);
  comm->shared->aborted = true;
  comm->shared->changed.notify_all();
  return abi::kSuccess;
}

abi::Result ncclCommGetAsyncError(ncclComm* comm, abi::Result* error) {
  std::lock_guard<std::mutex> lock(comm->mutex);
  *error = comm->async_error;
  return abi::kSuccess;
}

abi::Result ncclAllReduce(const void* send, void* recv, size_t count, abi::DataType type,
                          abi::RedOp op, ncclComm* comm, CUstream_st* stream) {
  return submit(comm, {Op::kAllReduce, send, recv, count, type, op}, stream);
}

abi::Result ncclBroadcast(const void* send, void* recv, size_t count, abi::DataType type, int root,
                          ncclComm* comm, CUstream_st* stream) {
  Op op{Op::kBroadcast, send, recv, count, type, 0};
  op.root = root;
  return submit(comm, op, stream);
}

abi::Result ncclAllGather(const void* send, void* recv, size_t count, abi::DataType type,
                          ncclComm* comm, CUstream_st* stream) {
  return submit(comm, {Op::kAllGather, send, recv, count, type, 0}, stream);
}

abi::Result ncclReduce(const void* send, void* recv, size_t count, abi::DataType type,
                       abi::RedOp red, int root, ncclComm* comm, CUstream_st* stream) {
  Op op{Op::kReduce, send, recv, count, type, red};
  op.root = root;
  return submit(comm, op, stream);
}

abi::Result ncclReduceScatter(const void* send, void* recv, size_t count, abi::DataType type,
                              abi::RedOp op, ncclComm* comm, CUstream_st* stream) {
  return submit(comm, {Op::kReduceScatter, send, recv, count, type, op}, stream);
}

abi::Result ncclSend(const void* send, size_t count, abi::DataType type, int peer, ncclComm* comm,
                     CUstream_st* stream) {
  Op op{Op::kSend, send, nullptr, count, type, 0};
  op.root = peer;
  return submit(comm, op, stream);
}

abi::Result ncclRecv(void* recv, size_t count, abi::DataType type, int peer, ncclComm* comm,
                     CUstream_st* stream) {
  Op op{Op::kRecv, nullptr, recv, count, type, 0};
  op.root = peer;
  return submit(comm, op, stream);
}

abi::Result ncclGroupStart() {
  ++group.depth;
  return abi::kSuccess;
}

abi::Result ncclGroupEnd() {
  if (group.depth == 0) return kInvalidArgument;
  if (--group.depth > 0 || group.ops.empty()) return abi::kSuccess;
  cudaLaunchHostFunc(group.stream, run_item, new Item{group.comm, std::move(group.ops)});
  group.ops.clear();
  return abi::kSuccess;
}

abi::Result ncclRedOpCreatePreMulSum(abi::RedOp* op, void* scalar, abi::DataType type,
                                     abi::ScalarResidence residence, ncclComm* comm) {
  if (residence != abi::kScalarHostImmediate) return kInvalidArgument;
  double value = 0;
  if (is_float(type)) {
    value = load_float(static_cast<const unsigned char*>(scalar), type);
  } else {
    value = static_cast<double>(load_int(static_cast<const unsigned char*>(scalar), type));
  }
  std::lock_guard<std::mutex> lock(comm->mutex);
  *op = comm->next_custom++;
  comm->custom_ops[*op] = value;
  return abi::kSuccess;
}

abi::Result ncclRedOpDestroy(abi::RedOp op, ncclComm* comm) {
  std::lock_guard<std::mutex> lock(comm->mutex);
  return comm->custom_ops.erase(op) == 1 ? abi::kSuccess : kInvalidArgument;
}

}  // extern "C"
