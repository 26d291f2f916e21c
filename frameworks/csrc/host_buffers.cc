#include "csrc/host_buffers.h"

#include <runrun/dlpack_rules.h>

#include "csrc/output_blocks.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>

namespace py = pybind11;

namespace runrun::python {
namespace {

constexpr size_t kAlignment = 64;

static_assert(sizeof(Py_ssize_t) == sizeof(int64_t), "DLPack shapes are int64_t");

// The DLPack dtype of a buffer-protocol format ("=f", "<i", "?"...) and item size; false for a
// format the runtime does not reduce (unsigned wider than 8 bits, big-endian, structs...).
bool dtype_of(const char* format, Py_ssize_t itemsize, DLDataType& out) {
  if (format == nullptr) format = "B";
  if (*format == '=' || *format == '<' || *format == '@') ++format;
  if (format[0] == '\0' || format[1] != '\0') return false;
  const auto bits = static_cast<uint8_t>(itemsize * 8);
  out = DLDataType{kDLInt, bits, 1};
  switch (format[0]) {
    case 'b':
    case 'h':
    case 'i':
    case 'l':
    case 'q':
      return itemsize == 1 || itemsize == 2 || itemsize == 4 || itemsize == 8;
    case 'B':
      out.code = kDLUInt;
      return itemsize == 1;
    case 'e':
    case 'f':
    case 'd':
      out.code = kDLFloat;
      return itemsize == 2 || itemsize == 4 || itemsize == 8;
    case '?':
      out.code = dlpack_rules::kDLPackBool;
      return itemsize == 1;
    default:
      return false;
  }
}

// One allocation (output_blocks.h) holds the DLManagedTensor, its size, its shape and
// (64-byte aligned) the data.
struct HostOutput {
  DLManagedTensor managed;
  size_t size;
};

void free_host_output(DLManagedTensor* managed) {
  give_output_block(managed->manager_ctx, static_cast<HostOutput*>(managed->manager_ctx)->size);
}

void capsule_destructor(PyObject* capsule) {
  // A consumer renames the capsule ("used_dltensor") when it takes ownership.
  if (!PyCapsule_IsValid(capsule, "dltensor")) return;
  auto* managed = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule, "dltensor"));
  if (managed != nullptr && managed->deleter != nullptr) managed->deleter(managed);
}

// The capsule that owns a buffer_view's Py_buffer: releasing it lets the exporter go.
constexpr const char* kBufferCapsule = "runrun.buffer_view";

void release_buffer(PyObject* capsule) {
  auto* buffer = static_cast<Py_buffer*>(PyCapsule_GetPointer(capsule, kBufferCapsule));
  if (buffer == nullptr) {
    PyErr_Clear();
    return;
  }
  PyBuffer_Release(buffer);
  std::free(buffer);
}

uintptr_t round_up(uintptr_t n) { return (n + kAlignment - 1) / kAlignment * kAlignment; }

}  // namespace

bool buffer_view(PyObject* obj, bool writable, BufferView& out) {
  // The exporter's buffer itself, owned by a capsule that releases it (what memoryview(obj)
  // does, without its two GC-tracked objects: ~400 instructions less per tensor). The same
  // request as memoryview's (PyBUF_FULL_RO): the checks below decide, as before.
  auto* buffer = static_cast<Py_buffer*>(std::malloc(sizeof(Py_buffer)));
  if (buffer == nullptr) throw std::bad_alloc();
  if (PyObject_GetBuffer(obj, buffer, PyBUF_FULL_RO) != 0) {
    std::free(buffer);
    PyErr_Clear();
    return false;
  }
  PyObject* owner = PyCapsule_New(buffer, kBufferCapsule, release_buffer);
  if (owner == nullptr) {
    PyBuffer_Release(buffer);
    std::free(buffer);
    PyErr_Clear();
    return false;
  }
  out.owner = py::reinterpret_steal<py::object>(owner);
  if ((writable && buffer->readonly) || buffer->ndim > 64 || !PyBuffer_IsContiguous(buffer, 'C') ||
      !dtype_of(buffer->format, buffer->itemsize, out.view.dtype)) {
    return false;
  }
  out.view.data = buffer->buf;
  out.view.device = DLDevice{kDLCPU, 0};
  out.view.ndim = buffer->ndim;
  out.view.shape = reinterpret_cast<int64_t*>(buffer->shape);
  out.view.strides = nullptr;  // C-contiguous, checked above
  out.view.byte_offset = 0;
  return true;
}

py::object new_host_output(const DLTensor& like, const DLTensor** tensor) {
  size_t elements = 1;
  for (int i = 0; i < like.ndim; ++i) elements *= static_cast<size_t>(like.shape[i]);
  const size_t item = (static_cast<size_t>(like.dtype.bits) * like.dtype.lanes + 7) / 8;
  // A block aligned by hand rather than aligned_alloc, from the cache of freed outputs.
  const size_t header = sizeof(HostOutput) + sizeof(int64_t) * like.ndim;
  const size_t size = header + kAlignment + elements * item;
  void* block = take_output_block(size);
  if (block == nullptr) throw std::bad_alloc();
  auto* out = static_cast<HostOutput*>(block);
  out->size = size;
  auto* shape = reinterpret_cast<int64_t*>(out + 1);
  if (like.ndim > 0) std::memcpy(shape, like.shape, sizeof(int64_t) * like.ndim);
  DLTensor& t = out->managed.dl_tensor;
  const auto data = reinterpret_cast<uintptr_t>(block) + header;
  t.data = reinterpret_cast<void*>(round_up(data));
  t.device = DLDevice{kDLCPU, 0};
  t.ndim = like.ndim;
  t.dtype = like.dtype;
  t.shape = shape;
  t.strides = nullptr;
  t.byte_offset = 0;
  out->managed.manager_ctx = block;
  out->managed.deleter = free_host_output;
  PyObject* capsule = PyCapsule_New(&out->managed, "dltensor", capsule_destructor);
  if (capsule == nullptr) {
    give_output_block(block, size);
    throw py::error_already_set();
  }
  *tensor = &t;
  return py::reinterpret_steal<py::object>(capsule);
}

}  // namespace runrun::python
