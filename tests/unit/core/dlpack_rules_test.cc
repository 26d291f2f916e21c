// The tensor rules of runrun/dlpack_rules.h (issue 41, point 1): the accepted dtypes match
// runrun's DataType (name, width, both directions of the core's conversion), everything else is
// refused with the one message, and the layout rule (row-major, size-1 dimensions free, tensors
// without elements always accepted) is what the core enforces.
#include <runrun/dlpack_rules.h>

#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "common/data_type.h"
#include "common/errors.h"
#include "core/api/dlpack_convert.h"

using namespace runrun;
namespace rules = runrun::dlpack_rules;

namespace {

// A host DLTensor over `shape` and `strides` (empty: none), no data.
struct Fake {
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;
  DLDataType dtype{kDLFloat, 32, 1};
  DLTensor tensor() {
    DLTensor t{};
    t.device = {kDLCPU, 0};
    t.ndim = static_cast<int>(shape.size());
    t.dtype = dtype;
    t.shape = shape.data();
    t.strides = strides.empty() ? nullptr : strides.data();
    return t;
  }
};

// The core's verdict on `fake`: "" when view_from_dlpack accepts it, else its message.
std::string core_error(Fake fake) {
  DLTensor t = fake.tensor();
  try {
    view_from_dlpack(&t, "allreduce 'x'");
    return "";
  } catch (const InvalidArgumentError& e) {
    return e.what();
  }
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("dlpack rules: one accepted dtype per DataType, with its name and width",
          "[core][dlpack]") {
  REQUIRE(rules::kNumAcceptedDtypes == static_cast<size_t>(kNumDataTypes));
  for (const rules::AcceptedDtype& d : rules::kAcceptedDtypes) {
    INFO(std::string(d.name));
    const DataType type = data_type_from_int(d.data_type);
    CHECK(data_type_name(type) == d.name);
    CHECK(element_size(type) * 8 == d.bits);
    const DLDataType dl{d.code, d.bits, 1};
    CHECK(rules::find_accepted_dtype(dl) == &d);
    CHECK(rules::find_data_type(d.data_type) == &d);
    // The core converts both ways through the table.
    Fake fake{{2}, {}, dl};
    DLTensor t = fake.tensor();
    CHECK(view_from_dlpack(&t, "x").dtype == type);
    OwnedTensor owned = OwnedTensor::allocate(type, {2});
    DLManagedTensor* managed = to_dlpack(std::move(owned));
    CHECK(managed->dl_tensor.dtype.code == d.code);
    CHECK(managed->dl_tensor.dtype.bits == d.bits);
    CHECK(managed->dl_tensor.dtype.lanes == 1);
    managed->deleter(managed);
  }
  CHECK(rules::kDLPackBool == 6);  // kDLBool of DLPack >= 0.8
  CHECK(rules::accepted_dtype({rules::kDLPackBool, 8, 1}));
}

TEST_CASE("dlpack rules: other dtypes are refused, by the core with the one message",
          "[core][dlpack]") {
  const std::vector<DLDataType> refused = {{kDLUInt, 16, 1},
                                           {kDLUInt, 32, 1},
                                           {kDLUInt, 64, 1},
                                           {kDLInt, 128, 1},
                                           {kDLFloat, 8, 1},
                                           {kDLFloat, 128, 1},
                                           {kDLBfloat, 32, 1},
                                           {kDLFloat, 32, 4},
                                           {kDLInt, 8, 0},
                                           {kDLComplex, 64, 1},
                                           {rules::kDLPackBool, 16, 1},
                                           {kDLOpaqueHandle, 64, 1}};
  for (const DLDataType& t : refused) {
    INFO("code " << int(t.code) << ", " << int(t.bits) << " bits, " << t.lanes << " lanes");
    CHECK_FALSE(rules::accepted_dtype(t));
    CHECK(rules::find_accepted_dtype(t) == nullptr);
    CHECK(contains(core_error({{2}, {}, t}),
                   "allreduce 'x': " + rules::unsupported_dtype_message(t)));
  }
  CHECK(rules::accepted_dtype_list() ==
        "uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64 or bool");
  CHECK(rules::unsupported_dtype_message({kDLUInt, 16, 1}) ==
        "unsupported dtype (DLPack code 1, 16 bits, 1 lanes); use uint8, int8, int16, int32, "
        "int64, float16, bfloat16, float32, float64 or bool");
  CHECK(core_error({{2}, {}, {kDLComplex, 64, 1}}) ==
        "allreduce 'x': unsupported dtype (DLPack code 5, 64 bits, 1 lanes); use uint8, int8, "
        "int16, int32, int64, float16, bfloat16, float32, float64 or bool");
}

TEST_CASE("dlpack rules: row-major layouts, free size-1 dimensions, tensors without elements",
          "[core][dlpack]") {
  struct Case {
    const char* what;
    Fake fake;
    bool accepted;
  };
  const std::vector<Case> cases = {
      {"no strides", {{3, 4}, {}}, true},
      {"a scalar", {{}, {}}, true},
      {"row-major", {{3, 4}, {4, 1}}, true},
      {"row-major, 3-d", {{2, 3, 4}, {12, 4, 1}}, true},
      {"size-1 dimensions with any stride", {{3, 1, 4}, {4, 99, 1}}, true},
      {"size-1 last dimension with any stride", {{4, 1}, {1, 7}}, true},
      {"no element ([3, 0], torch's strides)", {{3, 0}, {1, 1}}, true},
      {"no element, any strides", {{0, 5}, {-3, 42}}, true},
      {"transposed", {{3, 4}, {1, 3}}, false},
      {"every other column", {{3, 2}, {4, 2}}, false},
      {"gap between rows", {{3, 4}, {5, 1}}, false},
      {"broadcast (stride 0)", {{3, 4}, {0, 1}}, false},
  };
  for (const Case& c : cases) {
    INFO(c.what);
    Fake fake = c.fake;
    const DLTensor t = fake.tensor();
    CHECK(rules::contiguous(t) == c.accepted);
    CHECK(rules::contiguous(t.shape, t.strides, t.ndim) == c.accepted);
    const std::string error = core_error(c.fake);
    if (c.accepted) {
      CHECK(error.empty());
    } else {
      CHECK(contains(error, "allreduce 'x': the tensor is not contiguous (shape "));
      CHECK(contains(error, "call .contiguous() on it first"));
    }
  }
  const int64_t shape[] = {2, 0, 3};
  CHECK(rules::has_no_element(shape, 3));
  CHECK_FALSE(rules::has_no_element(shape, 1));
  CHECK_FALSE(rules::has_no_element(nullptr, 0));
}

// The table is usable at compile time (the fast path and the core check it per tensor).
static_assert(rules::accepted_dtype({kDLBfloat, 16, 1}));
static_assert(!rules::accepted_dtype({kDLUInt, 16, 1}));
static_assert(rules::find_data_type(9)->name == "int16");
