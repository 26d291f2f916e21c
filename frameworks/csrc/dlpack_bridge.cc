#include "csrc/dlpack_bridge.h"

#include <string>

#include "csrc/errors.h"

namespace py = pybind11;

namespace runrun::python {
namespace {

constexpr const char* kCapsuleName = "dltensor";

void delete_unconsumed(PyObject* capsule) {
  // A consumer renames the capsule to "used_dltensor" and owns the tensor from then on.
  if (!PyCapsule_IsValid(capsule, kCapsuleName)) return;
  auto* managed = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule, kCapsuleName));
  if (managed != nullptr && managed->deleter != nullptr) managed->deleter(managed);
}

[[noreturn]] void raise_invalid(const std::string& message) {
  raise_status(RUNRUN_INVALID_ARGUMENT, message.c_str());
}

}  // namespace

BorrowedTensor borrow_tensor(const py::handle& obj, const char* what) {
  py::object capsule = py::reinterpret_borrow<py::object>(obj);
  if (!PyCapsule_CheckExact(capsule.ptr())) {
    if (!py::hasattr(capsule, "__dlpack__")) {
      raise_invalid(std::string(what) + ": expected a DLPack capsule or an object with " +
                    "__dlpack__(), got " + std::string(py::str(py::type::of(obj))));
    }
    capsule = capsule.attr("__dlpack__")();
  }
  const char* name = PyCapsule_GetName(capsule.ptr());
  if (name == nullptr || std::string(name) != kCapsuleName) {
    raise_invalid(std::string(what) + ": DLPack capsule named '" + (name ? name : "") +
                  "' cannot be used; pass a fresh legacy 'dltensor' capsule " +
                  "(torch.utils.dlpack.to_dlpack)");
  }
  auto* managed = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule.ptr(), kCapsuleName));
  if (managed == nullptr) throw py::error_already_set();
  return BorrowedTensor{std::move(capsule), &managed->dl_tensor};
}

py::capsule to_capsule(DLManagedTensor* managed) {
  PyObject* capsule = PyCapsule_New(managed, kCapsuleName, delete_unconsumed);
  if (capsule == nullptr) {
    if (managed->deleter != nullptr) managed->deleter(managed);
    throw py::error_already_set();
  }
  return py::reinterpret_steal<py::capsule>(capsule);
}

}  // namespace runrun::python
