// The poe method: the whole job started by a vendor MPI's own mpiexec (the
// analogue of GridMPI on IBM calling poe), so that the ranks can use that
// MPI as their transport inside the cluster (p2p/vendor/).  Owner: rpim/.
//
// mpirun runs ONE command for the whole job:
//
//   <mpiexec> <style options> <vendor.mpiexec_args> -n N [<host file>] <env flags>
//       $MPIROOT/bin/gridmpi-proxy --vendor --rank-env VAR [--cwd DIR] -- program args...
//
// Every process the vendor starts is a gridmpi-proxy agent: it takes its
// rank from the vendor's variable (VAR: OMPI_COMM_WORLD_RANK, PMI_RANK),
// connects back to mpirun like a remote agent, starts the program and
// reports its pid and exact end.  So mpirun keeps the control role (no extra
// vendor rank) and keeps its guarantees per rank (exit status of the lowest
// rank, "rank 3 killed by signal 11", abort codes), which the vendor's
// mpiexec alone would give only as one aggregate status.
#pragma once
#include <stdexcept>
#include <string>
#include <vector>

#include "conf/hostfile.hpp"

namespace gridmpi::rpim {

enum class VendorStyle { openmpi, mpich };

// The vendor.* parameters as given ("" = not set).
struct VendorSettings {
  std::string name;
  std::string mpiexec;
  std::string plugin;
  std::string style;
  std::string mpiexec_args;
  std::string rank_env;
};

struct VendorSpec {
  std::string name;                  // canonical: openmpi, mpich, or the site's name
  std::vector<std::string> mpiexec;  // the command and its fixed options
  std::string plugin;                // absolute path of libgridmpi-vendor-NAME.so
  VendorStyle style = VendorStyle::openmpi;
  std::vector<std::string> extra_args;
  std::string rank_env;
};

// One line "<cause>; <fix>" (printed after "mpirun: ", exit 2).
class VendorError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// "openmpi" for openmpi/ompi/open-mpi, "mpich" for mpich/mpich2/hydra, the
// name itself otherwise, "" for "" and "none".
std::string canonical_vendor_name(const std::string& name);

// The vendor to use, or a spec with an empty name for none.  root: the
// installation root (conf::mpiroot()) for the default plug-in path.
// Throws VendorError for an unknown name the settings do not define, a bad
// style or malformed quoting.  Does not look at the file system.
VendorSpec resolve_vendor(const VendorSettings& settings, const std::string& root);

// The host file in the vendor's form: "host slots=N" (openmpi; one line per
// host, slots of repeated hosts summed, as Open MPI requires) or "host:N"
// (mpich; one line per entry, in order).
std::string vendor_hostfile_text(VendorStyle style, const std::vector<conf::HostEntry>& hosts);

struct VendorLaunch {
  int np = 1;
  std::string hostfile;                 // translated file, "" = none
  std::vector<std::string> env_names;   // passed explicitly (remote hosts)
  bool showrank = false;                // use the vendor's own tagging
  bool as_root = false;                 // Open MPI refuses root without a flag
  bool oversubscribe = false;           // more ranks than slots (Open MPI refuses without a flag)
  std::vector<std::string> agent_argv;  // gridmpi-proxy --vendor ... -- program args
};

std::vector<std::string> vendor_argv(const VendorSpec& spec, const VendorLaunch& launch);

}  // namespace gridmpi::rpim
