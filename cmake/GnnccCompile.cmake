# gnncc_add_model: compile a model (.gnn) into a static library target at
# build time.
#
#   gnncc_add_model(<name> SOURCE <file.gnn>
#                   [TARGET cuda|cpu]          # default cuda, as gnncc's
#                   [ARCH sm_80 sm_90 ...]     # --arch (cuda); default sm_80,sm_90
#                   [INCLUDE_DIRS <dir>...]    # -I, where imports are found
#                   [OPENMP]                   # cpu: -fopenmp, links OpenMP::OpenMP_C
#                   [VENDOR cublas cusparse]   # cuda: --vendor, links CUDA::cublas, CUDA::cusparse
#                   [OPTIONS <flag>...])       # more gnncc flags (-O0, ...)
#
# <name> is a STATIC library holding the model's object.  Linking it gives
# the directory of the generated header (<file>.h, as in #include "gcn.h")
# and the link dependencies: gnncc::gnnrt, and for cuda gnncc::gnnrt_cuda and CUDA::cudart_static
# (find_package(CUDAToolkit)) and the C++ runtime that nvcc's host code
# needs.  The output is ${CMAKE_CURRENT_BINARY_DIR}/gnncc-models/<name>/<file>.o.
#
# gnncc runs with CC set to the project's C compiler (cpu) or NVCC to the
# toolkit's nvcc (cuda).  Its -MD dependency file (the model, its imports,
# gnncc itself) is used as the custom command's DEPFILE where CMake
# supports that for the generator (3.20 and later: Ninja and Makefiles);
# elsewhere only the model's own file is a dependency.
#
# Needs the C language enabled in the project (the library links as C).

# functions keep the policies of their definition: CMP0116 makes CMake
# rewrite DEPFILE paths for Ninja
cmake_policy(VERSION 3.16...3.28)

function(gnncc_add_model name)
  cmake_parse_arguments(PARSE_ARGV 1 arg "OPENMP" "SOURCE;TARGET" "ARCH;INCLUDE_DIRS;OPTIONS;VENDOR")
  if(arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "gnncc_add_model(${name}): unknown arguments ${arg_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT arg_SOURCE)
    message(FATAL_ERROR "gnncc_add_model(${name}): SOURCE <file.gnn> is required")
  endif()
  if(NOT arg_TARGET)
    set(arg_TARGET cuda)
  endif()
  if(NOT arg_TARGET MATCHES "^(cuda|cpu)$")
    message(FATAL_ERROR "gnncc_add_model(${name}): TARGET must be cuda or cpu, not '${arg_TARGET}'")
  endif()
  if(arg_ARCH AND arg_TARGET STREQUAL "cpu")
    message(WARNING "gnncc_add_model(${name}): ARCH has no effect with TARGET cpu")
  endif()
  if(arg_OPENMP AND arg_TARGET STREQUAL "cuda")
    message(WARNING "gnncc_add_model(${name}): OPENMP has no effect with TARGET cuda")
  endif()

  get_filename_component(src "${arg_SOURCE}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
  get_filename_component(stem "${src}" NAME_WE)
  set(dir "${CMAKE_CURRENT_BINARY_DIR}/gnncc-models/${name}")
  set(obj "${dir}/${stem}.o")
  set(hdr "${dir}/${stem}.h")
  file(MAKE_DIRECTORY "${dir}")

  set(flags --target=${arg_TARGET})
  if(arg_ARCH AND arg_TARGET STREQUAL "cuda")
    list(JOIN arg_ARCH "," arch)
    list(APPEND flags --arch=${arch})
  endif()
  foreach(d IN LISTS arg_INCLUDE_DIRS)
    get_filename_component(d "${d}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    list(APPEND flags -I "${d}")
  endforeach()
  if(arg_OPENMP AND arg_TARGET STREQUAL "cpu")
    list(APPEND flags -fopenmp)
  endif()
  # the vendor libraries the schedules may call (docs/vendor.md)
  foreach(v IN LISTS arg_VENDOR)
    if(NOT v MATCHES "^(cublas|cusparse)$")
      message(FATAL_ERROR "gnncc_add_model(${name}): VENDOR takes cublas and cusparse, not '${v}'")
    endif()
  endforeach()
  if(arg_VENDOR AND arg_TARGET STREQUAL "cuda")
    list(JOIN arg_VENDOR "," vendor)
    list(APPEND flags --vendor=${vendor})
  endif()
  list(APPEND flags ${arg_OPTIONS})

  set(env)
  if(arg_TARGET STREQUAL "cuda")
    if(NOT TARGET CUDA::cudart_static)
      find_package(CUDAToolkit REQUIRED)
    endif()
    if(CUDAToolkit_NVCC_EXECUTABLE)
      set(env "NVCC=${CUDAToolkit_NVCC_EXECUTABLE}")
    endif()
  elseif(CMAKE_C_COMPILER)
    set(env "CC=${CMAKE_C_COMPILER}")
  endif()

  set(depfile)
  if(CMAKE_VERSION VERSION_GREATER_EQUAL 3.20 AND CMAKE_GENERATOR MATCHES "Ninja|Makefiles")
    list(APPEND flags -MD -MF "${dir}/${stem}.d")
    set(depfile DEPFILE "${dir}/${stem}.d")
  endif()

  # in this tree, gnncc::gnncc is an alias: DEPENDS wants the real name
  # for the target-level dependency that builds the compiler first
  get_target_property(gnncc_tgt gnncc::gnncc ALIASED_TARGET)
  if(NOT gnncc_tgt)
    set(gnncc_tgt)
  endif()
  add_custom_command(
    OUTPUT "${obj}"
    BYPRODUCTS "${hdr}"
    COMMAND ${CMAKE_COMMAND} -E env ${env}
            "$<TARGET_FILE:gnncc::gnncc>" ${flags} "${src}" -o "${obj}"
    DEPENDS "${src}" "$<TARGET_FILE:gnncc::gnncc>" ${gnncc_tgt}
    ${depfile}
    COMMENT "Compiling model ${arg_SOURCE} (gnncc --target=${arg_TARGET})"
    VERBATIM)

  add_library(${name} STATIC "${obj}")
  set_target_properties(${name} PROPERTIES LINKER_LANGUAGE C)
  target_include_directories(${name} INTERFACE "${dir}")
  target_link_libraries(${name} INTERFACE gnncc::gnnrt)
  if(arg_TARGET STREQUAL "cuda")
    # the runtime's CUDA device layer, then CUDA's own runtime
    target_link_libraries(${name} INTERFACE gnncc::gnnrt_cuda CUDA::cudart_static)
    # shared only since CUDA 13 (no _static targets to ask for)
    foreach(v IN LISTS arg_VENDOR)
      target_link_libraries(${name} INTERFACE CUDA::${v})
    endforeach()
  elseif(arg_OPENMP)
    find_package(OpenMP REQUIRED COMPONENTS C)
    target_link_libraries(${name} INTERFACE OpenMP::OpenMP_C)
  endif()
endfunction()
