// MPI_Info objects: ordered (key, value) string pairs.  Owner: core/info*.cpp.
#pragma once
#include <mpi.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/handle_table.hpp"

namespace gridmpi::core {

struct Info {
  MPI_Info handle = MPI_INFO_NULL;
  // Insertion order is kept: MPI_Info_get_nthkey numbers keys in that order.
  std::vector<std::pair<std::string, std::string>> entries;

  // Throw MPI_ERR_INFO_KEY / MPI_ERR_INFO_VALUE for over-long or empty keys.
  void set(const std::string& key, const std::string& value);
  std::optional<std::string> get(const std::string& key) const;
  void erase(const std::string& key);  // throws MPI_ERR_INFO_NOKEY when absent
};

// "MPI_THREAD_MULTIPLE" for MPI_THREAD_MULTIPLE (MPI_INFO_ENV's and a session's thread_level).
std::string thread_level_name(int level);
HandleTable<Info>& info_table();  // MPI_INFO_ENV always present
Info& info(MPI_Info handle);      // throws MpiError(MPI_ERR_INFO)
// Fills MPI_INFO_ENV (command, argv, maxprocs, soft, host, arch, wdir,
// thread_level) at MPI_Init.  argc/argv may be null (then /proc/self/cmdline).
void fill_info_env(int* argc, char*** argv, int world_size, int thread_level,
                   const std::string& host);
// The (key, value) pairs of MPI_INFO_ENV from argc/argv (argv null: from
// /proc/self/cmdline).  world_size 0 leaves out maxprocs and soft,
// thread_level < 0 thread_level, an empty host uses gethostname.  With
// (argc, argv, 0, -1, "") the result depends on nothing MPI_Init sets up:
// MPI_Info_create_env gives the same keys before MPI_Init and after
// MPI_Finalize (the job's size is not known to a process before MPI_Init in
// a multi-cluster job, and no thread level was requested yet).
std::vector<std::pair<std::string, std::string>> startup_info(int argc, char** argv, int world_size = 0,
                                                              int thread_level = -1,
                                                              const std::string& host = {});

}  // namespace gridmpi::core
