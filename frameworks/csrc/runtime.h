#pragma once
// Why: the Python view of one runrun_runtime (one per process). Owns it and destroys it; every
// collective returns a Handle that keeps this object alive until the op completed.
// Threading: methods are called with the GIL held; blocking calls (init, shutdown, collective
// process-set changes) release it.

#include <runrun/c_api.h>
#include <pybind11/pybind11.h>
#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

namespace runrun::python {

class Handle;

class Runtime {
 public:
  explicit Runtime(std::optional<std::string> backend);
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  void shutdown();
  bool is_running() const;
  runrun_topology topology() const;
  std::string backend_name() const;

  int32_t add_process_set(const std::vector<int32_t>& ranks);
  void remove_process_set(int32_t id);
  std::vector<int32_t> process_set_ranks(int32_t id) const;
  int32_t process_set_rank(int32_t id) const;

  void start_timeline(const std::string& path, bool mark_cycles);
  void stop_timeline();

  // The raw runtime for the collective bindings (runtime_collectives.cc); fails once destroyed.
  runrun_runtime* get() const;

 private:
  runrun_runtime* rt_ = nullptr;
  pid_t owner_pid_ = 0;  // the process that made it: a forked child leaves it alone
};

void bind_runtime(pybind11::module_& m);
// Adds the collective methods to the Runtime class (runtime_collectives.cc).
void bind_collectives(pybind11::class_<Runtime>& cls);

}  // namespace runrun::python
