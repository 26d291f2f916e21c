/* runrun C API: the only surface language bindings use.
 *
 * Why: bindings (the pybind11 extension, future ones) talk to the core through plain C types and
 * DLPack tensors, so one build serves every framework and no binding sees a C++ type.
 *
 * Threading contract: every function may be called from any thread, concurrently. Collectives
 * are asynchronous: an enqueue function validates its arguments, queues the op and returns a
 * handle at once; the runtime's background thread runs the op. Tensors passed in are borrowed:
 * the caller keeps their memory alive and untouched until the handle completes.
 *
 * Tensors: DLPack DLTensor in host memory (kDLCPU, or pinned kDLCUDAHost) or, where a CUDA
 * runtime is found at run time, CUDA memory (kDLCUDA; see "CUDA tensors" below); another device
 * is refused at enqueue with RUNRUN_UNSUPPORTED naming the device and what was found), contiguous
 * (strides NULL or row-major), byte_offset honoured. dtypes: kDLUInt 8 (uint8), kDLInt 8/16/32/64,
 * kDLFloat 16/32/64, kDLBfloat 16, and bool as DLPack >= 0.8 writes it (code 6, 8 bits).
 *
 * Errors: every function returns a runrun_status. On failure the message (what was wrong, on
 * which rank, op and tensor, and what to do) is available from runrun_last_error() on the
 * calling thread until its next runrun_* call, or from runrun_handle_error() for an op that
 * failed after it was enqueued.
 */
#ifndef RUNRUN_C_API_H_
#define RUNRUN_C_API_H_

#include <dlpack/dlpack.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Codes match runrun::ErrorCode. */
typedef enum {
  RUNRUN_OK = 0,
  RUNRUN_INVALID_ARGUMENT = 1,
  RUNRUN_MISMATCH = 2,
  RUNRUN_PEER_FAILURE = 3,
  RUNRUN_TIMEOUT = 4,
  RUNRUN_SHUT_DOWN = 5,
  RUNRUN_INTERNAL = 6,
  RUNRUN_UNSUPPORTED = 7,
  RUNRUN_IN_PROGRESS = 100 /* handle not complete yet (poll, or wait that timed out) */
} runrun_status;

/* Codes match runrun::ReduceOp and Horovod's. */
typedef enum {
  RUNRUN_OP_AVERAGE = 0,
  RUNRUN_OP_SUM = 1,
  RUNRUN_OP_ADASUM = 2, /* allreduce of floating-point host tensors, power-of-two set sizes */
  RUNRUN_OP_MIN = 3,
  RUNRUN_OP_MAX = 4,
  RUNRUN_OP_PRODUCT = 5
} runrun_reduce_op;

typedef struct runrun_runtime runrun_runtime; /* one per process (or per rank in tests) */
typedef struct runrun_handle runrun_handle;   /* one enqueued op; release when done */

/* Message of the last failed call on this thread ("" if none). Valid until the next call. */
const char* runrun_last_error(void);

/* --- lifetime and queries ----------------------------------------------------------------- */

/* Starts a runtime over `backend` ("auto", "mpi", "gloo"; NULL means RUNRUN_BACKEND or auto).
 * Topology comes from the backend (MPI) or from the RUNRUN_* variables a launcher sets. */
runrun_status runrun_init(const char* backend, runrun_runtime** out);

/* Stops the background thread; every pending and later op fails with RUNRUN_SHUT_DOWN.
 * Idempotent. Does not free: call runrun_destroy afterwards (it shuts down if needed). */
runrun_status runrun_shutdown(runrun_runtime* rt);
void runrun_destroy(runrun_runtime* rt);
int runrun_is_running(const runrun_runtime* rt);

typedef struct {
  int rank, size, local_rank, local_size, cross_rank, cross_size;
  int homogeneous; /* 1: every host has the same number of ranks */
} runrun_topology;
runrun_status runrun_get_topology(const runrun_runtime* rt, runrun_topology* out);

/* --- elastic training (docs/elastic.md) ----------------------------------------------------
 * Why: an elastic job's ranks live through several generations (the launcher's driver assigns
 * ranks per generation through the rendezvous store); the framework layer asks whether a newer
 * generation exists (hosts changed: stop at the next commit) and reports a failed collective so
 * that the launcher starts a new generation. Independent of any runtime (they work between
 * runrun_shutdown and the next runrun_init). Thread-safe. */

/* 1 when this process is a worker of an elastic job (runrun --gloo --min-np/--max-np/...). */
int runrun_elastic_enabled(void);
/* The generation this process joined last (0: none yet) and the newest one the launcher
 * published. RUNRUN_INVALID_ARGUMENT when not elastic; errors of the rendezvous store else. */
runrun_status runrun_elastic_generations(uint64_t* joined, uint64_t* latest);
/* Tells the launcher that this rank's collectives failed in the generation it joined. */
runrun_status runrun_elastic_report_failure(void);

/* --- job store (an elastic driver outside the launcher: runrun.ray, docs/ray.md) ----------
 * Why: an elastic job's generations live in its rendezvous store (rendezvous/elastic_keys.h),
 * which must outlive every rank. The launcher serves it itself; a driver written in another
 * language (the Ray driver) serves it and writes the generations through these functions, so
 * that the wire protocol and its secret handshake have one implementation (rendezvous/).
 * Secrets are 64 hex digits; no message ever contains them.
 * Threading: a server runs its own thread; start/port/stop from any thread, stop once. A client
 * may be used from any thread (calls are serialised); a failed call leaves it unusable (every
 * later call fails). Every call that talks to the store blocks (bounded by the client's
 * timeout): call them without holding locks that the store's other users need. */
typedef struct runrun_store_server runrun_store_server;
typedef struct runrun_store_client runrun_store_client;

/* Serves a store on bind_address:port (port 0: one the OS picks). RUNRUN_INVALID_ARGUMENT when
 * the secret is malformed or the address cannot be bound. */
runrun_status runrun_store_server_start(const char* bind_address, uint16_t port,
                                        const char* secret_hex, runrun_store_server** out);
uint16_t runrun_store_server_port(const runrun_store_server* server);
/* Connections refused so far (a wrong or missing secret, protocol errors). */
size_t runrun_store_server_refused(const runrun_store_server* server);
/* Stops serving (waiting clients see their connection close) and frees the server. */
void runrun_store_server_stop(runrun_store_server* server);

/* Connects within timeout_s and proves the secret; every later request is bounded by
 * timeout_s too. `who` names this client in messages ("the Ray elastic driver"). */
runrun_status runrun_store_client_connect(const char* host, uint16_t port, const char* secret_hex,
                                          double timeout_s, const char* who,
                                          runrun_store_client** out);
runrun_status runrun_store_client_set(runrun_store_client* client, uint64_t generation,
                                      const char* key, const char* value, size_t value_size);
/* *found = 0 when the key does not exist; else *value (free it with runrun_store_free) and
 * *value_size. Never waits for the key. */
runrun_status runrun_store_client_get(runrun_store_client* client, uint64_t generation,
                                      const char* key, int* found, char** value,
                                      size_t* value_size);
/* Adds delta to a counter (absent: 0); *result = the new value. */
runrun_status runrun_store_client_add(runrun_store_client* client, uint64_t generation,
                                      const char* key, int64_t delta, int64_t* result);
/* *exists = 1 when the key exists. */
runrun_status runrun_store_client_check(runrun_store_client* client, uint64_t generation,
                                        const char* key, int* exists);
void runrun_store_client_close(runrun_store_client* client);
void runrun_store_free(char* value);

/* Name of the data backend in use ("mpi", "gloo", "local"). Valid while rt lives. */
const char* runrun_backend_name(const runrun_runtime* rt);

/* What this build can run, 0 or 1 each; independent of any runtime: a backend (mpi, gloo, nccl)
 * that is implemented and compiled in, and cuda = collectives on GPU tensors. */
typedef struct {
  int mpi, gloo, nccl, cuda;
} runrun_build_info;
void runrun_get_build_info(runrun_build_info* out);
const char* runrun_version(void);
/* 1 when the MPI library gives MPI_THREAD_MULTIPLE (queried without a runtime). */
int runrun_mpi_threads_supported(void);

/* --- collectives ------------------------------------------------------------------------- *
 * `name` identifies the op across ranks: every rank must enqueue an op of the same name, and a
 * name may have one op in flight at a time. `output` may equal `input` (in place); shapes and
 * dtypes must match, both contiguous. process_set 0 is the global set.
 * A NULL `output` of allreduce/broadcast (or NULL `outputs`, or a NULL entry of them, for
 * grouped_allreduce) makes the runtime allocate the output like the input, on the input's
 * device (for frameworks whose tensors are immutable: TensorFlow, JAX); take it with
 * runrun_handle_take_output(_at) (index: the tensor's position in the group) once the handle
 * completed. Host input: 64-byte aligned host memory. CUDA input: cudaMallocAsync on this
 * thread's stream (runrun_set_cuda_stream), freed by the DLPack deleter with cudaFreeAsync on
 * that stream. */

typedef struct {
  runrun_reduce_op op;
  double prescale_factor;  /* applied to the input before reducing; 1.0 for none */
  double postscale_factor; /* applied to the result; 1.0 for none */
  int32_t process_set;     /* 0: global */
} runrun_allreduce_options;

/* Defaults: average, factors 1.0, global set. */
runrun_allreduce_options runrun_allreduce_default_options(void);

runrun_status runrun_allreduce(runrun_runtime* rt, const char* name, const DLTensor* input,
                               const DLTensor* output, const runrun_allreduce_options* options,
                               runrun_handle** out);

/* Allgather: the first dimension may differ per rank, the others must agree. The runtime
 * allocates the output (sum of first dimensions x the rest); take it with
 * runrun_handle_take_output once the handle completed. */
runrun_status runrun_allgather(runrun_runtime* rt, const char* name, const DLTensor* input,
                               int32_t process_set, runrun_handle** out);

/* Broadcast root_rank's tensor into `output` on every rank (`output` may equal `input`). */
runrun_status runrun_broadcast(runrun_runtime* rt, const char* name, const DLTensor* input,
                               const DLTensor* output, int32_t root_rank, int32_t process_set,
                               runrun_handle** out);

runrun_status runrun_barrier(runrun_runtime* rt, int32_t process_set, runrun_handle** out);

/* Alltoall: rank r sends splits[p] rows (first-dimension slices, consecutive) to each rank p of
 * the set. splits == NULL means equal splits (the first dimension must divide by the set size).
 * The runtime allocates the output (received rows concatenated in rank order); the rows
 * received from each rank are available from runrun_handle_received_splits. */
runrun_status runrun_alltoall(runrun_runtime* rt, const char* name, const DLTensor* input,
                              const int64_t* splits, size_t num_splits, int32_t process_set,
                              runrun_handle** out);

/* Reducescatter (op: sum or average): reduces across ranks and gives rank r its slice of the
 * first dimension; when it does not divide evenly the first (dim0 % size) ranks get one extra
 * row. The runtime allocates the output. */
runrun_status runrun_reducescatter(runrun_runtime* rt, const char* name, const DLTensor* input,
                                   const runrun_allreduce_options* options, runrun_handle** out);

/* Grouped ops: n tensors negotiated and executed as one unit; one handle completes when all
 * are done. Outputs the runtime allocates are taken by index (runrun_handle_take_output_at). */
runrun_status runrun_grouped_allreduce(runrun_runtime* rt, const char* const* names,
                                       const DLTensor* const* inputs,
                                       const DLTensor* const* outputs, size_t n,
                                       const runrun_allreduce_options* options,
                                       runrun_handle** out);
runrun_status runrun_grouped_allgather(runrun_runtime* rt, const char* const* names,
                                       const DLTensor* const* inputs, size_t n, int32_t process_set,
                                       runrun_handle** out);
runrun_status runrun_grouped_reducescatter(runrun_runtime* rt, const char* const* names,
                                           const DLTensor* const* inputs, size_t n,
                                           const runrun_allreduce_options* options,
                                           runrun_handle** out);

/* Join (uneven data): this rank has no more batches. Until every rank of the set joined,
 * allreduces on the others proceed with this rank contributing zeros. The handle completes when
 * every rank joined; runrun_handle_join_result then gives the last rank to join. */
runrun_status runrun_join(runrun_runtime* rt, int32_t process_set, runrun_handle** out);

/* --- process sets -------------------------------------------------------------------------- */

/* Collective over all ranks (each passes the same sorted ranks): registers a set, returns its
 * id (> 0) on every rank, members and non-members alike. */
runrun_status runrun_add_process_set(runrun_runtime* rt, const int32_t* ranks, size_t n,
                                     int32_t* id_out);
/* Collective over all ranks. The global set (0) cannot be removed. */
runrun_status runrun_remove_process_set(runrun_runtime* rt, int32_t id);
/* Copies up to `capacity` ranks of the set into `ranks`, sets *n to the set's size. */
runrun_status runrun_process_set_ranks(const runrun_runtime* rt, int32_t id, int32_t* ranks,
                                       size_t capacity, size_t* n);
/* This process's rank within set `id`, or -1 when it is not a member (or no such set). */
int32_t runrun_process_set_rank(const runrun_runtime* rt, int32_t id);

/* How much negotiation one process set's background thread did, since init: for benchmarks
 * and tests that check how many rounds a workload takes (every rank counts its own). Any
 * thread; the values only grow while the runtime runs. */
typedef struct runrun_counters {
  uint64_t negotiation_rounds; /* rounds (one control allreduce each) */
  uint64_t coordinator_rounds; /* rounds that also went through the coordinator */
  uint64_t cache_hits;         /* tensors agreed on the response cache's fast path */
  uint64_t fused_collectives;  /* allreduces of more than one tensor through the fusion buffer */
} runrun_counters;
runrun_status runrun_get_counters(const runrun_runtime* rt, int32_t process_set,
                                  runrun_counters* out);

/* runrun --profile (RUNRUN_PROFILE set when init ran): how late each rank's readiness reached
 * the global set's negotiation, the "slowest rank" of the profile table (docs/profiling.md,
 * core/negotiation/rank_lateness.h). Per tensor agreed, a rank's lateness is its readiness minus
 * the earliest rank's, on one time line built from the round that agreed it (no clock sync); per
 * rank the median and mean of its last 1024 such samples. Rank 0 only, gathered from the other
 * ranks after 1, 2, 4, ... then every 16 rounds that agreed work: *n is the set's size on rank
 * 0 (entries past `capacity` not written), 0 elsewhere or when not profiling. Any thread. */
typedef struct runrun_rank_lateness {
  double median_s;  /* seconds */
  double mean_s;    /* seconds */
  uint64_t samples; /* tensors measured for this rank so far */
} runrun_rank_lateness;
runrun_status runrun_get_rank_lateness(const runrun_runtime* rt, runrun_rank_lateness* out,
                                       size_t capacity, size_t* n);

/* --- timeline ------------------------------------------------------------------------------ */

/* Starts writing a Chrome-trace JSON to `path` (replaces RUNRUN_TIMELINE's file if running). */
runrun_status runrun_start_timeline(runrun_runtime* rt, const char* path);
/* The same, with a global CYCLE_START mark per negotiation round when `mark_cycles` is non-zero
 * (Horovod's start_timeline(path, mark_cycles=True)). */
runrun_status runrun_start_timeline_marking_cycles(runrun_runtime* rt, const char* path,
                                                   int mark_cycles);
/* Closes the timeline file as valid JSON. No-op when none is running. */
runrun_status runrun_stop_timeline(runrun_runtime* rt);

/* --- CUDA tensors (docs/gpu.md "Streams") -------------------------------------------------
 * Why: runrun never synchronizes a device. When a kDLCUDA tensor is enqueued, runrun records an
 * event on the calling thread's CUDA stream (the framework's current stream, e.g. torch's
 * torch.cuda.current_stream().cuda_stream) and its own stream waits on that event before it
 * reads the tensor; before the handle completes, that same stream is made to wait
 * (cudaStreamWaitEvent) for the op's completion event, so work the framework enqueues on it
 * after runrun_handle_wait sees the output. Outputs the runtime allocates for a CUDA input are
 * on the input's device (stream-ordered cudaMallocAsync; the DLPack deleter frees them on that
 * stream). Thread-local: applies to this thread's later enqueues; NULL (the default) is the
 * legacy default stream. The stream must live until the ops enqueued with it completed. */
void runrun_set_cuda_stream(void* stream);
/* This thread's stream as set above (NULL by default). */
void* runrun_cuda_stream(void);
/* Blocks the calling thread until the work enqueued on `stream` (of cuda:`device`) so far ran:
 * an event recorded there and waited for, never a device-wide synchronization. For a framework
 * that has no stream to hand over and none to consume on (TensorFlow: docs/gpu.md, "Framework
 * adapters"): after runrun_handle_wait it waits on the host for the outputs, which the
 * handle's completion made `stream` wait for. RUNRUN_UNSUPPORTED (with what the library search
 * found) without a usable CUDA runtime. */
runrun_status runrun_cuda_stream_wait_host(void* stream, int32_t device);
/* Copies `src` into `dst`: the same dtype and shape, both contiguous, not overlapping, each in
 * host memory or on a CUDA device (both CUDA: the same one); RUNRUN_INVALID_ARGUMENT naming
 * what is wrong otherwise. Between host tensors, a copy done on return. When either is CUDA
 * memory, a copy enqueued on this thread's stream (above) that runs later: a host source must
 * stay untouched and alive, and a host destination is not written, until that stream ran it
 * (runrun_cuda_stream_wait_host); RUNRUN_UNSUPPORTED, with what the library search found,
 * without a usable CUDA runtime. Why: XLA allocates every result of a custom call itself, so
 * runrun.jax's jit handler copies an output the runtime allocated (allgather, alltoall,
 * reducescatter) into XLA's buffer, in stream order on XLA's stream, without linking the CUDA
 * runtime. The stream must be the one the op was enqueued with: the DLPack deleter of a
 * runtime-allocated CUDA output frees it on that stream, which then runs after the copy. */
runrun_status runrun_copy_tensor(const DLTensor* src, const DLTensor* dst);

/* --- handles ------------------------------------------------------------------------------ */

/* RUNRUN_IN_PROGRESS, RUNRUN_OK, or the op's error code. Never blocks. */
runrun_status runrun_handle_poll(runrun_handle* h);
/* Blocks until done or `timeout_seconds` passed (< 0: no limit); RUNRUN_IN_PROGRESS when it
 * timed out. Blocks on a condition variable, never spins; bindings release the GIL around it. */
runrun_status runrun_handle_wait(runrun_handle* h, double timeout_seconds);
/* Error text of a failed op ("" otherwise). Valid while h lives. */
const char* runrun_handle_error(runrun_handle* h);
/* For ops that allocate their output (allgather): moves it out once; the caller owns it and
 * calls its deleter. Fails with RUNRUN_INVALID_ARGUMENT when there is none (or taken). */
runrun_status runrun_handle_take_output(runrun_handle* h, DLManagedTensor** out);
/* Output `index` of a grouped op (take_output is index 0). */
runrun_status runrun_handle_take_output_at(runrun_handle* h, size_t index, DLManagedTensor** out);
/* Alltoall: rows received from each rank; valid while h lives. */
runrun_status runrun_handle_received_splits(runrun_handle* h, const int64_t** splits,
                                            size_t* count);
/* Join: the last rank to join. */
runrun_status runrun_handle_join_result(runrun_handle* h, int32_t* last_rank);
void runrun_handle_release(runrun_handle* h);

#ifdef __cplusplus
}
#endif

#endif /* RUNRUN_C_API_H_ */
