// Hardware resources for MPI_Comm_split_type's MPI_COMM_TYPE_HW_GUIDED and
// MPI_COMM_TYPE_HW_UNGUIDED (MPI-4.0 7.4.2).  Owner: core/hw_resource.cpp.
//
// A process belongs to one instance of a resource type when every CPU it
// may run on (sched_getaffinity) lies in that instance, read from Linux's
// /sys/devices/system/cpu (packages, cores, caches, NUMA nodes).  An unbound
// process on a two-core machine is in one package and one L3 cache, but in
// no single core.  Processes on different hosts never share an instance
// (the caller splits by host first).  No hwloc: /sys gives what is needed.
#pragma once
#include <optional>
#include <string>
#include <vector>

namespace gridmpi::core {

// The resource types known here, from the largest to the smallest (the
// order MPI_COMM_TYPE_HW_UNGUIDED tries them in).  "mpi_shared_memory" and
// "machine" are the host itself and are not listed.
const std::vector<std::string>& hw_resource_types();

// Whether `type` names the host ("mpi_shared_memory", "machine", "node"):
// MPI_COMM_TYPE_SHARED's split.
bool hw_resource_is_host(const std::string& type);

// The number, on this host, of the one instance of `type` that holds all
// of this process's CPUs; nullopt when the type is unknown here (network
// or accelerator types, a cache level this machine lacks) or the process
// may run on CPUs of several instances.  Names are matched without regard
// to case; "socket" is "package", "pu" is "hwthread", "numa" is "numanode",
// "lNcache" is the unified or data cache of level N.
std::optional<long> hw_resource_instance(const std::string& type);

// The same for a given CPU set and sysfs root (unit tests).
std::optional<long> hw_resource_instance(const std::string& type, const std::vector<int>& cpus,
                                         const std::string& sysfs_cpu_root);

}  // namespace gridmpi::core
