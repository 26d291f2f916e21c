#pragma once
// Why: the elastic layer of the Python package (runrun.elastic) asks the core whether a newer
// generation of the job exists and reports failed collectives (c_api.h, "elastic training").
// Threading: the bound functions release nothing; they take the GIL like any call.

#include <pybind11/pybind11.h>

namespace runrun::python {

void bind_elastic(pybind11::module_& m);

}  // namespace runrun::python
