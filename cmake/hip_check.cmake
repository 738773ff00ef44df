# STRATA_MOE_HIP_CHECK: the HIP build of the fused-wmma kernels, checked without AMD hardware.
#
# Included from the top CMakeLists.txt: compiles each checked .hip source device-only for gfx1100
# with clang (no HIP headers, no device libraries: src/hip/portability.hpp supplies what the
# kernels need) into a code object, and registers a ctest (label cpu) per object that disassembles
# it and requires its matrix instruction in its kernels:
#   hip_check_gfx1100_wmma      fused_wmma_gfx1100.hip      native_kernel_wmma  v_wmma_i32_16x16x16_iu8
#   hip_check_gfx1100_wmma_q10  fused_wmma_q10_gfx1100.hip  wmma_q10_kernel     v_wmma_f32_16x16x16_f16
# Run as a script (cmake -P) it is that check: -DOBJDUMP=... -DOBJECT=... -DINSTRUCTION=...
# -DKERNEL=... (a name every checked kernel's symbol contains).

if(CMAKE_SCRIPT_MODE_FILE)
  execute_process(COMMAND ${OBJDUMP} -d --mcpu=gfx1100 ${OBJECT}
                  OUTPUT_VARIABLE disassembly ERROR_VARIABLE objdump_errors RESULT_VARIABLE objdump_status)
  if(NOT objdump_status EQUAL 0)
    message(FATAL_ERROR "hip_check: ${OBJDUMP} failed on ${OBJECT}: ${objdump_errors}")
  endif()
  string(REGEX MATCHALL "${INSTRUCTION}" found "${disassembly}")
  list(LENGTH found count)
  string(REGEX MATCHALL "\n[0-9a-f]+ <[^>]*${KERNEL}[^>]*>:" kernels "${disassembly}")
  list(LENGTH kernels kernel_count)
  message(STATUS "hip_check: ${count} x ${INSTRUCTION} in ${kernel_count} ${KERNEL} kernel(s) of ${OBJECT}")
  if(count EQUAL 0)
    message(FATAL_ERROR "hip_check: no ${INSTRUCTION} in the gfx1100 disassembly of ${OBJECT}")
  endif()
  if(kernel_count LESS 2)
    message(FATAL_ERROR "hip_check: expected the gate/up and down kernels, found ${kernel_count}")
  endif()
  return()
endif()

set(STRATA_HIP_CLANG "/usr/lib/llvm-19/bin/clang++" CACHE FILEPATH "clang with the AMDGPU target (HIP object check)")
set(STRATA_HIP_OBJDUMP "/usr/lib/llvm-19/bin/llvm-objdump" CACHE FILEPATH "llvm-objdump for the gfx1100 disassembly")
set(STRATA_HIP_CHECK_ARCH "gfx1100" CACHE STRING "AMDGPU target of the HIP object check")
foreach(tool IN ITEMS STRATA_HIP_CLANG STRATA_HIP_OBJDUMP)
  if(NOT EXISTS "${${tool}}")
    message(FATAL_ERROR "STRATA_MOE_HIP_CHECK=ON needs ${tool} (${${tool}}): install clang-19 llvm-19 lld-19 "
                        "(scripts/deps with STRATA_HIP_CHECK=1) or set ${tool}")
  endif()
endforeach()

# The flags that give a gfx1100 code object from bare clang: HIP language, device pass only, no
# HIP include paths or device bitcode libraries, no offload bundle around the object.
set(strata_hip_flags -std=c++20 -x hip --offload-arch=${STRATA_HIP_CHECK_ARCH} --cuda-device-only -nogpulib
    -nogpuinc -O2 --no-gpu-bundle-output -ffp-contract=off -Wall -Wextra -DSTRATA_HIP_NO_RUNTIME
    -I${CMAKE_CURRENT_SOURCE_DIR}/src)
set(strata_hip_objects "")

# strata_hip_check_object(NAME SOURCE KERNEL INSTRUCTION): NAME.o from src/hip/SOURCE, and its ctest.
function(strata_hip_check_object name source kernel instruction)
  set(object ${CMAKE_CURRENT_BINARY_DIR}/hip-check/${name}_${STRATA_HIP_CHECK_ARCH}.o)
  add_custom_command(
    OUTPUT ${object}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_CURRENT_BINARY_DIR}/hip-check
    COMMAND ${STRATA_HIP_CLANG} ${strata_hip_flags} -MD -MF ${object}.d -c
            ${CMAKE_CURRENT_SOURCE_DIR}/src/hip/${source} -o ${object}
    DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/src/hip/${source}
    DEPFILE ${object}.d
    COMMENT "HIP check: compiling ${source} for ${STRATA_HIP_CHECK_ARCH}"
    VERBATIM)
  set(strata_hip_objects ${strata_hip_objects} ${object} PARENT_SCOPE)
  if(STRATA_MOE_TESTS)
    string(REPLACE "fused_" "" test_suffix "${name}")
    add_test(NAME hip_check_${STRATA_HIP_CHECK_ARCH}_${test_suffix}
             COMMAND ${CMAKE_COMMAND} -DOBJDUMP=${STRATA_HIP_OBJDUMP} -DOBJECT=${object}
                     -DINSTRUCTION=${instruction} -DKERNEL=${kernel} -P ${CMAKE_CURRENT_FUNCTION_LIST_FILE})
    set_tests_properties(hip_check_${STRATA_HIP_CHECK_ARCH}_${test_suffix} PROPERTIES LABELS cpu)
  endif()
endfunction()

# The q8 fused-wmma kernels (int8 tile) and the q10 wmma kernels (f16 tile).
strata_hip_check_object(fused_wmma fused_wmma_gfx1100.hip native_kernel_wmma v_wmma_i32_16x16x16_iu8)
strata_hip_check_object(fused_wmma_q10 fused_wmma_q10_gfx1100.hip wmma_q10_kernel v_wmma_f32_16x16x16_f16)
add_custom_target(strata_hip_check ALL DEPENDS ${strata_hip_objects})
message(STATUS "strata-moe: HIP object check ON (${STRATA_HIP_CHECK_ARCH}, ${STRATA_HIP_CLANG})")
