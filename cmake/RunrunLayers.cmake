# Why: the layer rule (docs/architecture.md, Layers) is checked by every build, before anything
# compiles, so an include that goes up a layer fails the build naming the file, the line and
# the rule it breaks (cmake/check_layers.cmake). It runs again whenever a checked file changes;
# files added later are picked up by the CONFIGURE_DEPENDS glob.
set(RUNRUN_LAYER_FOLDERS common rendezvous ops core frameworks launcher)
set(runrun_layer_globs)
foreach(folder ${RUNRUN_LAYER_FOLDERS})
  foreach(extension h hh hpp c cc cpp cxx cu cuh inc)
    list(APPEND runrun_layer_globs ${PROJECT_SOURCE_DIR}/${folder}/*.${extension})
  endforeach()
endforeach()
file(GLOB_RECURSE runrun_layer_files CONFIGURE_DEPENDS ${runrun_layer_globs})
set(runrun_layer_stamp ${PROJECT_BINARY_DIR}/layer_check.stamp)
add_custom_command(
  OUTPUT ${runrun_layer_stamp}
  COMMAND ${CMAKE_COMMAND} -DROOT=${PROJECT_SOURCE_DIR} -DSTAMP=${runrun_layer_stamp}
          -P ${PROJECT_SOURCE_DIR}/cmake/check_layers.cmake
  DEPENDS ${runrun_layer_files} ${PROJECT_SOURCE_DIR}/cmake/check_layers.cmake
  COMMENT "Checking the layer rule of every #include (docs/architecture.md, Layers)"
  VERBATIM)
add_custom_target(runrun_layer_check ALL DEPENDS ${runrun_layer_stamp})
