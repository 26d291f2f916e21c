// Why: the collective methods of runrun._core.Runtime. Each validates nothing itself (the core
// does, at enqueue, with a message naming the op and tensor), borrows the DLPack tensors, enqueues
// and returns a Handle that keeps the tensors and the Runtime alive until the op completed.
// Threading: called with the GIL held; enqueueing never blocks.

#include <pybind11/stl.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "csrc/dlpack_bridge.h"
#include "csrc/errors.h"
#include "csrc/handle.h"
#include "csrc/runtime.h"

namespace py = pybind11;

namespace runrun::python {
namespace {

using HandlePtr = py::object;  // a runrun._core.Handle

runrun_allreduce_options make_options(int op, double prescale, double postscale,
                                      int32_t process_set) {
  runrun_allreduce_options options = runrun_allreduce_default_options();
  options.op = static_cast<runrun_reduce_op>(op);
  options.prescale_factor = prescale;
  options.postscale_factor = postscale;
  options.process_set = process_set;
  return options;
}

// An output argument: None asks the runtime to allocate the output (c_api.h; TensorFlow and
// JAX, whose tensors are immutable), anything else is borrowed.
BorrowedTensor borrow_output(const py::object& obj, const char* what) {
  if (obj.is_none()) return BorrowedTensor{};
  return borrow_tensor(obj, what);
}

// Borrows each tensor of a list (an output list: None entries stay NULL, see borrow_output)
// and records its owner for the handle's keep-alive set.
std::vector<const DLTensor*> borrow_all(const std::vector<py::object>& objects, const char* what,
                                        std::vector<py::object>& keep_alive, bool outputs = false) {
  std::vector<const DLTensor*> tensors;
  tensors.reserve(objects.size());
  for (const py::object& obj : objects) {
    BorrowedTensor borrowed = outputs ? borrow_output(obj, what) : borrow_tensor(obj, what);
    tensors.push_back(borrowed.tensor);
    keep_alive.push_back(std::move(borrowed.owner));
  }
  return tensors;
}

std::vector<const char*> c_names(const std::vector<std::string>& names) {
  std::vector<const char*> out;
  out.reserve(names.size());
  for (const std::string& name : names) out.push_back(name.c_str());
  return out;
}

HandlePtr finish(runrun_status status, runrun_handle* handle, const char* op, std::string name,
                 std::vector<py::object> keep_alive) {
  check_status(status, op);
  return new_handle_object(handle, op, py::str(name), keep_alive_of(std::move(keep_alive)));
}

HandlePtr allreduce(py::object self, const std::string& name, const py::object& input,
                    const py::object& output, int op, double prescale, double postscale,
                    int32_t process_set) {
  Runtime& rt = self.cast<Runtime&>();
  BorrowedTensor in = borrow_tensor(input, "allreduce input");
  BorrowedTensor out = borrow_output(output, "allreduce output");
  runrun_allreduce_options options = make_options(op, prescale, postscale, process_set);
  runrun_handle* handle = nullptr;
  runrun_status status =
      runrun_allreduce(rt.get(), name.c_str(), in.tensor, out.tensor, &options, &handle);
  return finish(status, handle, "allreduce", name, {self, in.owner, out.owner});
}

HandlePtr grouped_allreduce(py::object self, const std::vector<std::string>& names,
                            const std::vector<py::object>& inputs,
                            const std::vector<py::object>& outputs, int op, double prescale,
                            double postscale, int32_t process_set) {
  Runtime& rt = self.cast<Runtime&>();
  if (names.size() != inputs.size() || inputs.size() != outputs.size()) {
    raise_status(RUNRUN_INVALID_ARGUMENT,
                 "grouped_allreduce: names, inputs and outputs must have the same length");
  }
  std::vector<py::object> keep_alive{self};
  auto in = borrow_all(inputs, "grouped_allreduce input", keep_alive);
  auto out = borrow_all(outputs, "grouped_allreduce output", keep_alive, true);
  auto cnames = c_names(names);
  runrun_allreduce_options options = make_options(op, prescale, postscale, process_set);
  runrun_handle* handle = nullptr;
  runrun_status status = runrun_grouped_allreduce(rt.get(), cnames.data(), in.data(), out.data(),
                                                  names.size(), &options, &handle);
  return finish(status, handle, "grouped_allreduce", names.empty() ? "" : names[0],
                std::move(keep_alive));
}

HandlePtr allgather(py::object self, const std::string& name, const py::object& input,
                    int32_t process_set) {
  Runtime& rt = self.cast<Runtime&>();
  BorrowedTensor in = borrow_tensor(input, "allgather input");
  runrun_handle* handle = nullptr;
  runrun_status status = runrun_allgather(rt.get(), name.c_str(), in.tensor, process_set, &handle);
  return finish(status, handle, "allgather", name, {self, in.owner});
}

HandlePtr grouped_allgather(py::object self, const std::vector<std::string>& names,
                            const std::vector<py::object>& inputs, int32_t process_set) {
  Runtime& rt = self.cast<Runtime&>();
  if (names.size() != inputs.size()) {
    raise_status(RUNRUN_INVALID_ARGUMENT,
                 "grouped_allgather: names and inputs must have the same length");
  }
  std::vector<py::object> keep_alive{self};
  auto in = borrow_all(inputs, "grouped_allgather input", keep_alive);
  auto cnames = c_names(names);
  runrun_handle* handle = nullptr;
  runrun_status status = runrun_grouped_allgather(rt.get(), cnames.data(), in.data(), names.size(),
                                                  process_set, &handle);
  return finish(status, handle, "grouped_allgather", names.empty() ? "" : names[0],
                std::move(keep_alive));
}

HandlePtr broadcast(py::object self, const std::string& name, const py::object& input,
                    const py::object& output, int32_t root_rank, int32_t process_set) {
  Runtime& rt = self.cast<Runtime&>();
  BorrowedTensor in = borrow_tensor(input, "broadcast input");
  BorrowedTensor out = borrow_output(output, "broadcast output");
  runrun_handle* handle = nullptr;
  runrun_status status = runrun_broadcast(rt.get(), name.c_str(), in.tensor, out.tensor, root_rank,
                                          process_set, &handle);
  return finish(status, handle, "broadcast", name, {self, in.owner, out.owner});
}

HandlePtr alltoall(py::object self, const std::string& name, const py::object& input,
                   const std::optional<std::vector<int64_t>>& splits, int32_t process_set) {
  Runtime& rt = self.cast<Runtime&>();
  BorrowedTensor in = borrow_tensor(input, "alltoall input");
  runrun_handle* handle = nullptr;
  runrun_status status =
      runrun_alltoall(rt.get(), name.c_str(), in.tensor, splits ? splits->data() : nullptr,
                      splits ? splits->size() : 0, process_set, &handle);
  return finish(status, handle, "alltoall", name, {self, in.owner});
}

HandlePtr reducescatter(py::object self, const std::string& name, const py::object& input, int op,
                        double prescale, double postscale, int32_t process_set) {
  Runtime& rt = self.cast<Runtime&>();
  BorrowedTensor in = borrow_tensor(input, "reducescatter input");
  runrun_allreduce_options options = make_options(op, prescale, postscale, process_set);
  runrun_handle* handle = nullptr;
  runrun_status status = runrun_reducescatter(rt.get(), name.c_str(), in.tensor, &options, &handle);
  return finish(status, handle, "reducescatter", name, {self, in.owner});
}

HandlePtr grouped_reducescatter(py::object self, const std::vector<std::string>& names,
                                const std::vector<py::object>& inputs, int op, double prescale,
                                double postscale, int32_t process_set) {
  Runtime& rt = self.cast<Runtime&>();
  if (names.size() != inputs.size()) {
    raise_status(RUNRUN_INVALID_ARGUMENT,
                 "grouped_reducescatter: names and inputs must have the same length");
  }
  std::vector<py::object> keep_alive{self};
  auto in = borrow_all(inputs, "grouped_reducescatter input", keep_alive);
  auto cnames = c_names(names);
  runrun_allreduce_options options = make_options(op, prescale, postscale, process_set);
  runrun_handle* handle = nullptr;
  runrun_status status = runrun_grouped_reducescatter(rt.get(), cnames.data(), in.data(),
                                                      names.size(), &options, &handle);
  return finish(status, handle, "grouped_reducescatter", names.empty() ? "" : names[0],
                std::move(keep_alive));
}

HandlePtr barrier(py::object self, int32_t process_set) {
  Runtime& rt = self.cast<Runtime&>();
  runrun_handle* handle = nullptr;
  runrun_status status = runrun_barrier(rt.get(), process_set, &handle);
  return finish(status, handle, "barrier", "barrier", {self});
}

HandlePtr join(py::object self, int32_t process_set) {
  Runtime& rt = self.cast<Runtime&>();
  runrun_handle* handle = nullptr;
  runrun_status status = runrun_join(rt.get(), process_set, &handle);
  return finish(status, handle, "join", "join", {self});
}

}  // namespace

void bind_collectives(py::class_<Runtime>& cls) {
  cls.def("allreduce", &allreduce, py::arg("name"), py::arg("input"), py::arg("output"),
          py::arg("op"), py::arg("prescale_factor"), py::arg("postscale_factor"),
          py::arg("process_set"))
      .def("grouped_allreduce", &grouped_allreduce, py::arg("names"), py::arg("inputs"),
           py::arg("outputs"), py::arg("op"), py::arg("prescale_factor"),
           py::arg("postscale_factor"), py::arg("process_set"))
      .def("allgather", &allgather, py::arg("name"), py::arg("input"), py::arg("process_set"))
      .def("grouped_allgather", &grouped_allgather, py::arg("names"), py::arg("inputs"),
           py::arg("process_set"))
      .def("broadcast", &broadcast, py::arg("name"), py::arg("input"), py::arg("output"),
           py::arg("root_rank"), py::arg("process_set"))
      .def("alltoall", &alltoall, py::arg("name"), py::arg("input"), py::arg("splits"),
           py::arg("process_set"))
      .def("reducescatter", &reducescatter, py::arg("name"), py::arg("input"), py::arg("op"),
           py::arg("prescale_factor"), py::arg("postscale_factor"), py::arg("process_set"))
      .def("grouped_reducescatter", &grouped_reducescatter, py::arg("names"), py::arg("inputs"),
           py::arg("op"), py::arg("prescale_factor"), py::arg("postscale_factor"),
           py::arg("process_set"))
      .def("barrier", &barrier, py::arg("process_set"))
      .def("join", &join, py::arg("process_set"));
}

}  // namespace runrun::python
