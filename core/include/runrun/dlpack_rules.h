#pragma once
// Why: the one statement of which DLPack tensors runrun accepts, so the core (the C API's
// check, core/api/dlpack_convert.cc), the extension's fast path (frameworks/csrc/fast_enqueue.cc)
// and the Python adapters (which read the dtype names from runrun._core.ACCEPTED_DTYPES) cannot
// drift apart. Header-only and on DLPack alone: core/ and frameworks/csrc/ both include it
// (the layer rule allows frameworks/ this header beside the C API); not installed.
// The rules:
// - dtype: one of kAcceptedDtypes (single lane). Bool is code 6, 8 bits, as DLPack >= 0.8 writes
//   it (kDLBool, which the Debian dlpack.h 0.6 predates).
// - layout: contiguous(): no strides, or row-major without gaps where a dimension of size 1 may
//   have any stride (torch's is_contiguous); a tensor with no element (a dimension of size 0)
//   has no layout and is always accepted (torch exports [3, 0] with strides [1, 1]).
// - device: the core describes any device and decides at enqueue whether the build can move it
//   (core/api/enqueue_checks.cc, naming the device); the fast path takes host tensors (kDLCPU)
//   only and leaves the others to the general path.
// Thread-safety: constants and pure functions.

#include <dlpack/dlpack.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace runrun::dlpack_rules {

// DLPack's bool type code (kDLBool in DLPack >= 0.8).
inline constexpr uint8_t kDLPackBool = 6;

// One accepted element type: its name as users write it (runrun::data_type_name gives the same),
// its DLPack code and width, and the runrun::DataType it becomes (common/data_type.h; the core
// cannot be included from here, its unit test checks the two agree).
struct AcceptedDtype {
  std::string_view name;
  uint8_t code;
  uint8_t bits;
  int32_t data_type;
};

// In the order every message lists them.
inline constexpr AcceptedDtype kAcceptedDtypes[] = {
    {"uint8", kDLUInt, 8, 0},       {"int8", kDLInt, 8, 1},       {"int16", kDLInt, 16, 9},
    {"int32", kDLInt, 32, 2},       {"int64", kDLInt, 64, 3},     {"float16", kDLFloat, 16, 4},
    {"bfloat16", kDLBfloat, 16, 5}, {"float32", kDLFloat, 32, 6}, {"float64", kDLFloat, 64, 7},
    {"bool", kDLPackBool, 8, 8},
};
inline constexpr size_t kNumAcceptedDtypes = sizeof(kAcceptedDtypes) / sizeof(kAcceptedDtypes[0]);

// The entry of `t`, or nullptr when runrun does not take it.
constexpr const AcceptedDtype* find_accepted_dtype(DLDataType t) {
  if (t.lanes != 1) return nullptr;
  for (const AcceptedDtype& d : kAcceptedDtypes) {
    if (d.code == t.code && d.bits == t.bits) return &d;
  }
  return nullptr;
}

constexpr bool accepted_dtype(DLDataType t) { return find_accepted_dtype(t) != nullptr; }

// The entry of a runrun::DataType value, or nullptr.
constexpr const AcceptedDtype* find_data_type(int32_t data_type) {
  for (const AcceptedDtype& d : kAcceptedDtypes) {
    if (d.data_type == data_type) return &d;
  }
  return nullptr;
}

// "uint8, int8, ..., float64 or bool".
inline std::string accepted_dtype_list() {
  std::string out;
  for (size_t i = 0; i < kNumAcceptedDtypes; ++i) {
    if (i > 0) out += i + 1 == kNumAcceptedDtypes ? " or " : ", ";
    out += kAcceptedDtypes[i].name;
  }
  return out;
}

// What is wrong with a refused dtype and what to use instead (the caller prefixes the op and
// tensor): "unsupported dtype (DLPack code 5, 64 bits, 1 lanes); use uint8, ... or bool".
inline std::string unsupported_dtype_message(DLDataType t) {
  return "unsupported dtype (DLPack code " + std::to_string(t.code) + ", " +
         std::to_string(t.bits) + " bits, " + std::to_string(t.lanes) + " lanes); use " +
         accepted_dtype_list();
}

// True when one of the `ndim` dimensions is 0: the tensor has no element.
constexpr bool has_no_element(const int64_t* shape, int ndim) {
  for (int d = 0; d < ndim; ++d) {
    if (shape[d] == 0) return true;
  }
  return false;
}

// The layout rule above. `shape` must hold `ndim` values when ndim > 0.
constexpr bool contiguous(const int64_t* shape, const int64_t* strides, int ndim) {
  if (strides == nullptr || has_no_element(shape, ndim)) return true;
  int64_t expected = 1;
  for (int d = ndim - 1; d >= 0; --d) {
    if (shape[d] != 1 && strides[d] != expected) return false;
    expected *= shape[d];
  }
  return true;
}

constexpr bool contiguous(const DLTensor& t) { return contiguous(t.shape, t.strides, t.ndim); }

}  // namespace runrun::dlpack_rules
