// Nothing references this file on purpose: see registry_detail.hpp.  Its
// static initializer runs only where the whole library is linked.
#include "conf/registry_detail.hpp"

namespace {

[[maybe_unused]] const bool whole_library_linked = [] {
  gridmpi::conf::detail::set_unknown_keys_are_errors(true);
  return true;
}();

}  // namespace
