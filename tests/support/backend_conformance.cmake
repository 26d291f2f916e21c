# The backend conformance suite (tests/support/backend_conformance.h) as a library, shared by the
# unit tests (local backend) and the integration programs (process backends). Included from
# each area that needs it; defined once.
if(NOT TARGET runrun_backend_conformance)
  add_library(runrun_backend_conformance STATIC
    ${PROJECT_SOURCE_DIR}/tests/support/backend_conformance.cc
    ${PROJECT_SOURCE_DIR}/tests/support/backend_conformance_control.cc
    ${PROJECT_SOURCE_DIR}/tests/support/backend_conformance_adasum.cc
    ${PROJECT_SOURCE_DIR}/tests/support/backend_conformance_values.cc)
  target_link_libraries(runrun_backend_conformance PUBLIC runrun_ops)
  runrun_warnings(runrun_backend_conformance)
endif()
