# SSGD_WITH_CUDA=AUTO|ON|OFF decides whether the CUPTI tracer is built.
# AUTO builds it when the CUDA toolkit with CUPTI is found; ON stops configure
# with a message saying how to fix it when it is not; OFF never builds it.
string(TOUPPER "${SSGD_WITH_CUDA}" _ssgd_cuda_mode)
if(NOT _ssgd_cuda_mode MATCHES "^(AUTO|ON|OFF)$")
  message(FATAL_ERROR "SSGD_WITH_CUDA must be AUTO, ON or OFF, not '${SSGD_WITH_CUDA}'")
endif()

set(SSGD_TRACER_ENABLED OFF)
if(_ssgd_cuda_mode STREQUAL "OFF")
  set(SSGD_TRACER_STATUS "off (SSGD_WITH_CUDA=OFF)")
else()
  if(NOT CUDAToolkit_ROOT AND EXISTS /usr/local/cuda)
    set(CUDAToolkit_ROOT /usr/local/cuda)
  endif()
  find_package(CUDAToolkit QUIET)
  set(_ssgd_cuda_missing "")
  if(NOT CUDAToolkit_FOUND)
    set(_ssgd_cuda_missing "the CUDA toolkit")
  elseif(NOT TARGET CUDA::cupti)
    set(_ssgd_cuda_missing "CUPTI (CUDA::cupti)")
  endif()
  if(_ssgd_cuda_missing STREQUAL "")
    set(SSGD_TRACER_ENABLED ON)
    set(SSGD_TRACER_STATUS "on (CUDA ${CUDAToolkit_VERSION} in ${CUDAToolkit_LIBRARY_DIR})")
  elseif(_ssgd_cuda_mode STREQUAL "ON")
    message(FATAL_ERROR
      "SSGD_WITH_CUDA=ON but ${_ssgd_cuda_missing} was not found. Install the CUDA toolkit "
      "with CUPTI, point CUDAToolkit_ROOT at it (-DCUDAToolkit_ROOT=/usr/local/cuda), or "
      "configure with -DSSGD_WITH_CUDA=AUTO or OFF to build everything but the tracer.")
  else()
    set(SSGD_TRACER_STATUS "skipped: ${_ssgd_cuda_missing} not found (SSGD_WITH_CUDA=AUTO)")
  endif()
endif()
