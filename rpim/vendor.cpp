#include "rpim/vendor.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>

#include "rpim/method.hpp"

namespace gridmpi::rpim {

namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

struct BuiltIn {
  const char* name;
  const char* mpiexec;
  VendorStyle style;
};
// The Debian names: both MPIs are installable side by side, so the plain
// `mpiexec` is whichever the alternatives system chose; the suffixed name
// is the one we mean.
constexpr BuiltIn built_in[] = {
    {"openmpi", "mpiexec.openmpi", VendorStyle::openmpi},
    {"mpich", "mpiexec.mpich", VendorStyle::mpich},
};

const char* default_rank_env(VendorStyle style) {
  return style == VendorStyle::openmpi ? "OMPI_COMM_WORLD_RANK" : "PMI_RANK";
}

}  // namespace

std::string canonical_vendor_name(const std::string& name) {
  std::string n = lower(name);
  n.erase(0, n.find_first_not_of(" \t"));
  n.erase(n.find_last_not_of(" \t") + 1);
  if (n == "none") return "";
  if (n == "ompi" || n == "open-mpi" || n == "openmpi") return "openmpi";
  if (n == "mpich2" || n == "hydra" || n == "mpich") return "mpich";
  return n;
}

VendorSpec resolve_vendor(const VendorSettings& s, const std::string& root) {
  VendorSpec spec;
  spec.name = canonical_vendor_name(s.name);
  if (spec.name.empty()) return spec;
  for (char c : spec.name)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.'))
      throw VendorError("vendor name '" + s.name +
                        "' has characters other than letters, digits, '-', '_', '.'; use openmpi or mpich (or "
                        "the name your site file defines)");
  const BuiltIn* known = nullptr;
  for (const auto& b : built_in)
    if (spec.name == b.name) known = &b;
  if (!known && (s.mpiexec.empty() || s.style.empty()))
    throw VendorError("unknown vendor MPI '" + s.name +
                      "': the built-in ones are openmpi (ompi) and mpich (hydra, mpich2); another MPI must be "
                      "defined in the site file ([vendor] name, mpiexec, style = openmpi|mpich, plugin)");
  if (!s.style.empty()) {
    std::string style = lower(s.style);
    if (style == "openmpi")
      spec.style = VendorStyle::openmpi;
    else if (style == "mpich" || style == "hydra")
      spec.style = VendorStyle::mpich;
    else
      throw VendorError("vendor.style must be openmpi or mpich (the family of the vendor's mpiexec), got '" +
                        s.style + "'");
  } else {
    spec.style = known->style;
  }
  try {
    spec.mpiexec = split_words(s.mpiexec.empty() ? known->mpiexec : s.mpiexec);
    spec.extra_args = split_words(s.mpiexec_args);
  } catch (const std::exception& e) {
    throw VendorError(std::string("malformed vendor.mpiexec or vendor.mpiexec_args: ") + e.what() +
                      "; fix the quoting");
  }
  if (spec.mpiexec.empty()) throw VendorError("vendor.mpiexec is blank; name the vendor's mpiexec command");
  spec.rank_env = s.rank_env.empty() ? default_rank_env(spec.style) : s.rank_env;
  std::filesystem::path plugin = s.plugin;
  if (plugin.empty())
    plugin = std::filesystem::path(root) / "lib" / "gridmpi" / "vendor" / ("libgridmpi-vendor-" + spec.name + ".so");
  // The ranks may start in another directory (and on other hosts): absolute.
  spec.plugin = std::filesystem::absolute(plugin).lexically_normal().string();
  return spec;
}

std::string vendor_hostfile_text(VendorStyle style, const std::vector<conf::HostEntry>& hosts) {
  std::string out;
  if (style == VendorStyle::openmpi) {
    // Open MPI refuses a host named twice with slot counts: one line per
    // host, slots summed, in order of first appearance (Open MPI fills a
    // host's slots before the next host's anyway).
    std::vector<std::pair<std::string, long long>> merged;
    for (const auto& h : hosts) {
      auto it = std::find_if(merged.begin(), merged.end(), [&](const auto& m) { return m.first == h.host; });
      if (it == merged.end())
        merged.emplace_back(h.host, h.slots);
      else
        it->second += h.slots;
    }
    for (const auto& [host, slots] : merged) out += host + " slots=" + std::to_string(slots) + "\n";
    return out;
  }
  for (const auto& h : hosts) {
    // An IPv6 address in hydra's "host:N" would be ambiguous: bracket it.
    bool v6 = h.host.find(':') != std::string::npos;
    out += (v6 ? "[" + h.host + "]" : h.host) + ":" + std::to_string(h.slots) + "\n";
  }
  return out;
}

std::vector<std::string> vendor_argv(const VendorSpec& spec, const VendorLaunch& launch) {
  std::vector<std::string> argv = spec.mpiexec;
  auto add = [&](std::initializer_list<std::string> words) { argv.insert(argv.end(), words); };
  if (spec.style == VendorStyle::openmpi) {
    if (launch.as_root) add({"--allow-run-as-root"});
    if (launch.oversubscribe) add({"--oversubscribe"});
    if (launch.showrank) add({"--tag-output"});
  } else {
    if (launch.showrank) add({"-prepend-rank"});
  }
  argv.insert(argv.end(), spec.extra_args.begin(), spec.extra_args.end());
  add({"-n", std::to_string(launch.np)});
  if (!launch.hostfile.empty()) {
    if (spec.style == VendorStyle::openmpi)
      add({"--hostfile", launch.hostfile});
    else
      add({"-f", launch.hostfile});
  }
  // Names only, never values: the job cookie must not show on a command line.
  if (spec.style == VendorStyle::openmpi) {
    for (const auto& name : launch.env_names) add({"-x", name});
  } else if (!launch.env_names.empty()) {
    std::string list;
    for (const auto& name : launch.env_names) list += (list.empty() ? "" : ",") + name;
    add({"-genvlist", list});
  }
  argv.insert(argv.end(), launch.agent_argv.begin(), launch.agent_argv.end());
  return argv;
}

}  // namespace gridmpi::rpim
