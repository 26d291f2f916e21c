// Test fixture of tests/unit/gpu: a shared library that exports entry points under the names of
// the CUDA runtime's or NCCL's (which ones, and the version it reports, chosen by compile
// definitions), so that the run-time search and the symbol tables (ops/cuda, ops/nccl) are
// tested on machines without a GPU. Nothing here moves data; the tests only call the version
// and error-string functions.

extern "C" {

#if defined(FAKE_NCCL_VERSION)
int ncclGetVersion(int* version) {
  *version = FAKE_NCCL_VERSION;
  return 0;
}
const char* ncclGetErrorString(int) { return "fake NCCL error"; }
int ncclGetUniqueId(void*) { return 0; }
int ncclCommInitRank(void*, int, ...) { return 0; }
int ncclCommDestroy(void*) { return 0; }
int ncclCommAbort(void*) { return 0; }
int ncclCommGetAsyncError(void*, int*) { return 0; }
int ncclAllReduce() { return 0; }
int ncclBroadcast() { return 0; }
int ncclAllGather() { return 0; }
int ncclReduce() { return 0; }
int ncclReduceScatter() { return 0; }
int ncclSend() { return 0; }
int ncclRecv() { return 0; }
int ncclGroupStart() { return 0; }
int ncclGroupEnd() { return 0; }
#if defined(FAKE_COMPLETE)
int ncclRedOpCreatePreMulSum() { return 0; }
int ncclRedOpDestroy() { return 0; }
#endif
#endif

#if defined(FAKE_CUDART_VERSION)
int cudaRuntimeGetVersion(int* version) {
  *version = FAKE_CUDART_VERSION;
  return 0;
}
int cudaDriverGetVersion(int* version) {
  *version = 0;
  return 0;
}
int cudaGetDeviceCount(int* count) {
  *count = 0;
  return 100;  // cudaErrorNoDevice
}
const char* cudaGetErrorString(int) { return "fake: no CUDA-capable device is detected"; }
int cudaGetDevice(int*) { return 0; }
int cudaSetDevice(int) { return 0; }
int cudaStreamCreateWithFlags() { return 0; }
int cudaStreamDestroy() { return 0; }
int cudaStreamWaitEvent() { return 0; }
int cudaEventCreateWithFlags() { return 0; }
int cudaEventDestroy() { return 0; }
int cudaEventRecord() { return 0; }
int cudaEventQuery() { return 0; }
int cudaEventSynchronize() { return 0; }
int cudaMemcpyAsync() { return 0; }
int cudaMemsetAsync() { return 0; }
#if defined(FAKE_COMPLETE)
int cudaMalloc() { return 0; }
int cudaFree() { return 0; }
int cudaMallocHost() { return 0; }
int cudaFreeHost() { return 0; }
int cudaMallocAsync() { return 0; }
int cudaFreeAsync() { return 0; }
#endif
#endif

}  // extern "C"
