# Why: every third-party dependency is found here, once, with a message that names the Debian
# package to install when a required one is missing.
find_package(Threads REQUIRED)

find_package(fmt REQUIRED)
find_package(spdlog REQUIRED)

# libcrypto: HMAC-SHA256 for the rendezvous server's job-secret handshake (rendezvous/).
find_package(OpenSSL QUIET COMPONENTS Crypto)
if(NOT OpenSSL_FOUND)
  message(FATAL_ERROR "OpenSSL's libcrypto not found: install the Debian package libssl-dev")
endif()

find_path(DLPACK_INCLUDE_DIR dlpack/dlpack.h)
if(NOT DLPACK_INCLUDE_DIR)
  message(FATAL_ERROR "DLPack headers not found: install the Debian package libdlpack-dev")
endif()
add_library(runrun_dlpack INTERFACE)
target_include_directories(runrun_dlpack SYSTEM INTERFACE ${DLPACK_INCLUDE_DIR})

# runrun_resolve_backend(VAR FOUND PACKAGE_HINT): turns AUTO/ON/OFF plus "was it found" into 0/1,
# failing the configure step when ON was asked for and the dependency is missing.
function(runrun_resolve_backend var found hint)
  string(TOUPPER "${${var}}" wanted)
  if(wanted STREQUAL "OFF")
    set(${var}_ENABLED 0 PARENT_SCOPE)
  elseif(found)
    set(${var}_ENABLED 1 PARENT_SCOPE)
  elseif(wanted STREQUAL "ON")
    message(FATAL_ERROR "${var}=ON but it was not found: ${hint}")
  else()
    set(${var}_ENABLED 0 PARENT_SCOPE)
  endif()
endfunction()

set(_mpi_found FALSE)
if(NOT RUNRUN_WITH_MPI STREQUAL "OFF")
  find_package(MPI COMPONENTS C QUIET)
  if(MPI_C_FOUND)
    set(_mpi_found TRUE)
  endif()
endif()
runrun_resolve_backend(RUNRUN_WITH_MPI ${_mpi_found}
  "install the Debian packages libopenmpi-dev openmpi-bin")

set(_gloo_found FALSE)
if(NOT RUNRUN_WITH_GLOO STREQUAL "OFF")
  find_package(Gloo QUIET)
  if(Gloo_FOUND)
    set(_gloo_found TRUE)
  endif()
endif()
runrun_resolve_backend(RUNRUN_WITH_GLOO ${_gloo_found} "install the Debian package libgloo-dev")

set(_cuda_found FALSE)
if(NOT RUNRUN_WITH_CUDA STREQUAL "OFF")
  find_package(CUDAToolkit QUIET)
  if(CUDAToolkit_FOUND)
    set(_cuda_found TRUE)
  endif()
endif()
runrun_resolve_backend(RUNRUN_WITH_CUDA ${_cuda_found}
  "install the CUDA toolkit (nvcc) under /usr/local/cuda")

set(_nccl_found FALSE)
if(NOT RUNRUN_WITH_NCCL STREQUAL "OFF" AND RUNRUN_WITH_CUDA_ENABLED)
  find_path(NCCL_INCLUDE_DIR nccl.h HINTS ${CUDAToolkit_INCLUDE_DIRS} /usr/local/cuda/include)
  find_library(NCCL_LIBRARY nccl HINTS ${CUDAToolkit_LIBRARY_DIR} /usr/local/cuda/lib64)
  if(NCCL_INCLUDE_DIR AND NCCL_LIBRARY)
    set(_nccl_found TRUE)
  endif()
endif()
runrun_resolve_backend(RUNRUN_WITH_NCCL ${_nccl_found}
  "install NCCL (libnccl-dev) next to the CUDA toolkit")

message(STATUS "runrun backends: MPI=${RUNRUN_WITH_MPI_ENABLED} Gloo=${RUNRUN_WITH_GLOO_ENABLED} "
               "CUDA=${RUNRUN_WITH_CUDA_ENABLED} NCCL=${RUNRUN_WITH_NCCL_ENABLED}")
