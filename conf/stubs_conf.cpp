// TEMPORARY stubs so that the tree links while conf/ is written.
// The conf owner deletes this file.
#include <cstdlib>
#include "conf/hostfile.hpp"
#include "conf/log.hpp"
#include "conf/registry.hpp"
namespace gridmpi::conf {
ParamBase::ParamBase(ParamInfo info) : info_(std::move(info)) {}
const ResolvedValue& ParamBase::resolve() const { return value_; }
template <class T> Param<T>::Param(const char* n, T, const char*, const char*, Level l, std::initializer_list<const char*>) : ParamBase(ParamInfo{n, "", "", "", "", l, {}}) {}
template <class T> T Param<T>::get() const { return T{}; }
template class Param<std::int64_t>;
template class Param<bool>;
template class Param<double>;
template class Param<std::string>;
std::vector<const ParamBase*> all_parameters() { return {}; }
const char* source_name(Source) { return "default"; }
void reset_cache_for_tests() {}
std::vector<HostEntry> parse_hostfile(const std::string&) { return {}; }
std::vector<HostEntry> parse_hostfile_text(const std::string&, const std::string&) { return {}; }
}
namespace gridmpi {
spdlog::logger& log() { return *spdlog::default_logger(); }
void set_log_rank(int) {}
}
