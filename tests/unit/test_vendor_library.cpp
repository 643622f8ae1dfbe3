// The vendor plug-in loader's errors (p2p/vendor/vendor_library.cpp): one
// line naming the file and the cause.  The fake plug-ins are built by
// tests/unit/CMakeLists.txt from tests/unit/vendor/fake_plugin.c; loading a
// real vendor is tested by vendor_engine_test under the vendors' mpiexec.
#include <catch2/catch.hpp>

#include <fstream>
#include <string>

#include "p2p/vendor/vendor_abi.h"
#include "p2p/vendor/vendor_library.hpp"

using gridmpi::p2p::vendor::Library;

namespace {

std::string open_error(const std::string& path) {
  try {
    Library::open(path, 0);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("vendor loader: a missing file is named with the OS error", "[vendor]") {
  std::string e = open_error("/nonexistent/libgridmpi-vendor-none.so");
  CHECK_THAT(e, Catch::Contains("/nonexistent/libgridmpi-vendor-none.so"));
  CHECK_THAT(e, Catch::Contains("No such file or directory"));
  CHECK(e.find('\n') == std::string::npos);
}

TEST_CASE("vendor loader: a file that is no shared object gives dlmopen's reason", "[vendor]") {
  std::string path = std::string(GRIDMPI_TEST_VENDOR_FAKE_DIR) + "/not-elf.so";
  // Longer than an ELF header, so that the loader reads it and says why it is not one.
  std::ofstream(path) << std::string(200, 'x') << "\n";
  std::string e = open_error(path);
  CHECK_THAT(e, Catch::Contains(path));
  CHECK_THAT(e, Catch::Contains("dlmopen failed"));
  CHECK_THAT(e, Catch::Contains("invalid ELF header"));
}

TEST_CASE("vendor loader: a shared object without the entry point is not a plug-in", "[vendor]") {
  std::string path = std::string(GRIDMPI_TEST_VENDOR_FAKE_DIR) + "/libfake-vendor-none.so";
  std::string e = open_error(path);
  CHECK_THAT(e, Catch::Contains(path));
  CHECK_THAT(e, Catch::Contains("not a gridmpi vendor plug-in"));
}

TEST_CASE("vendor loader: another ABI version is refused before any call", "[vendor]") {
  std::string path = std::string(GRIDMPI_TEST_VENDOR_FAKE_DIR) + "/libfake-vendor-abi.so";
  std::string e = open_error(path);
  CHECK_THAT(e, Catch::Contains("ABI version " + std::to_string(GRIDMPI_VENDOR_ABI + 998)));
  CHECK_THAT(e, Catch::Contains("needs version " + std::to_string(GRIDMPI_VENDOR_ABI)));
}

TEST_CASE("vendor loader: the vendor's failing MPI_Init is reported with its text", "[vendor]") {
  std::string path = std::string(GRIDMPI_TEST_VENDOR_FAKE_DIR) + "/libfake-vendor-init.so";
  std::string e = open_error(path);
  CHECK_THAT(e, Catch::Contains("MPI_Init_thread failed"));
  CHECK_THAT(e, Catch::Contains("simulated failure 17"));
  CHECK_THAT(e, Catch::Contains("mpirun -vendor fake"));
}

TEST_CASE("vendor loader: no process library unless opened", "[vendor]") {
  CHECK(gridmpi::p2p::vendor::process_library() == nullptr);
  gridmpi::p2p::vendor::close_process_library();  // harmless when none is open
  CHECK(gridmpi::p2p::vendor::process_library() == nullptr);
}
