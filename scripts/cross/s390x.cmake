# CMake toolchain file: gridmpi for s390x (big-endian, 64-bit) with Debian's
# cross compilers, against the sysroot made by scripts/cross/setup.
#   cmake -G Ninja -B build/cross-s390x --toolchain scripts/cross/s390x.cmake
# (scripts/cross/build does this).  GRIDMPI_CROSS_SYSROOT (environment or
# cache) overrides the sysroot, default build/cross-sysroot-s390x.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR s390x)

set(_triple s390x-linux-gnu)
set(CMAKE_C_COMPILER ${_triple}-gcc)
set(CMAKE_CXX_COMPILER ${_triple}-g++)
set(CMAKE_Fortran_COMPILER ${_triple}-gfortran)

if(NOT GRIDMPI_CROSS_SYSROOT)
  if(DEFINED ENV{GRIDMPI_CROSS_SYSROOT})
    set(GRIDMPI_CROSS_SYSROOT $ENV{GRIDMPI_CROSS_SYSROOT})
  else()
    get_filename_component(GRIDMPI_CROSS_SYSROOT ${CMAKE_CURRENT_LIST_DIR}/../../build/cross-sysroot-s390x ABSOLUTE)
  endif()
endif()
if(NOT EXISTS ${GRIDMPI_CROSS_SYSROOT}/.gridmpi-sysroot)
  message(FATAL_ERROR "no s390x sysroot at ${GRIDMPI_CROSS_SYSROOT}; run scripts/cross/setup first")
endif()
# try_compile projects re-read this file: give them the same sysroot.
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES GRIDMPI_CROSS_SYSROOT)

# The sysroot holds both the libraries and libc/libstdc++ (its libc.so
# linker script names /lib/... paths that only resolve under --sysroot).
set(CMAKE_SYSROOT ${GRIDMPI_CROSS_SYSROOT})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)  # python3, the host's tools
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# Programs built here run under qemu-user (no binfmt_misc needed):
# ctest prefixes target commands with this.
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-s390x -L ${GRIDMPI_CROSS_SYSROOT})
