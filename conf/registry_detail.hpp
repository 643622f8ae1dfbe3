// Internal to conf/ (and its tests).
#pragma once

namespace gridmpi::conf::detail {

// Whether a site or user file key that names no registered parameter is an
// error.  Only a program that contains every parameter of the library can
// tell a typo from a parameter it merely did not link: registry_complete.cpp,
// which nothing references, switches this on when it is linked, i.e. in
// libmpi.so and in programs that link gridmpi_internal as a whole archive
// (gridmpi-info, the unit tests).  Other programs skip the check; the MPI
// processes and gridmpi-info still report the typo.
void set_unknown_keys_are_errors(bool on);
bool unknown_keys_are_errors();

}  // namespace gridmpi::conf::detail
