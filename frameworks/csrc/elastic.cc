#include "csrc/elastic.h"

#include <runrun/c_api.h>

#include <utility>

#include "csrc/errors.h"

namespace py = pybind11;

namespace runrun::python {

void bind_elastic(py::module_& m) {
  m.def(
      "elastic_enabled", [] { return runrun_elastic_enabled() != 0; },
      "True when this process is a worker of an elastic job.");
  m.def(
      "elastic_generations",
      [] {
        uint64_t joined = 0, latest = 0;
        runrun_status status = RUNRUN_OK;
        {
          py::gil_scoped_release release;  // a round trip to the launcher's store
          status = runrun_elastic_generations(&joined, &latest);
        }
        check_status(status, "elastic_generations");
        return std::make_pair(joined, latest);
      },
      "(generation this process joined last, newest generation the launcher published).");
  m.def(
      "elastic_report_failure",
      [] {
        runrun_status status = RUNRUN_OK;
        {
          py::gil_scoped_release release;
          status = runrun_elastic_report_failure();
        }
        check_status(status, "elastic_report_failure");
      },
      "Tells the launcher that this rank's generation failed (it starts a new one).");
}

}  // namespace runrun::python
