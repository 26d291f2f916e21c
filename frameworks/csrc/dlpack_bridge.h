#pragma once
// Why: tensors cross the C API as DLPack. Python hands the extension a legacy "dltensor" capsule
// (torch.utils.dlpack.to_dlpack, numpy's __dlpack__ ...); the extension borrows its DLTensor and
// keeps the capsule alive (so the framework keeps the memory) until the op's handle completes.
// Outputs the runtime allocates go back to Python as "dltensor" capsules for from_dlpack.
// Threading: call with the GIL held.

#include <dlpack/dlpack.h>
#include <pybind11/pybind11.h>

namespace runrun::python {

// A tensor the runtime borrows: `tensor` points into `owner`, valid while `owner` lives.
struct BorrowedTensor {
  pybind11::object owner;
  const DLTensor* tensor = nullptr;
};

// Accepts a "dltensor" capsule or any object with __dlpack__() returning one. Raises
// InvalidArgumentError for a used or versioned capsule. `what` names the argument in errors.
BorrowedTensor borrow_tensor(const pybind11::handle& obj, const char* what);

// Wraps a tensor the runtime allocated; the capsule calls its deleter unless a consumer
// (from_dlpack) took it over.
pybind11::capsule to_capsule(DLManagedTensor* managed);

}  // namespace runrun::python
