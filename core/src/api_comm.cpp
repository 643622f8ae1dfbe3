// C API: communicators (MPI-3.1 sections 6.4 and 6.8).
#include <algorithm>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/api.hpp"
#include "core/coll/coll.hpp"
#include "core/group.hpp"
#include "core/hw_resource.hpp"
#include "core/info.hpp"
#include "core/runtime.hpp"
#include "request/request.hpp"

using namespace gridmpi;
using namespace gridmpi::core;

extern "C" int PMPI_Comm_size(MPI_Comm comm_handle, int* size) {
  return api_call(comm_handle, "MPI_Comm_size", [&] {
    require_initialized("MPI_Comm_size");
    require_out(size, "size");
    *size = comm_local(comm_handle).size;
  });
}
GRIDMPI_WEAK(Comm_size)

extern "C" int PMPI_Comm_rank(MPI_Comm comm_handle, int* rank) {
  return api_call(comm_handle, "MPI_Comm_rank", [&] {
    require_initialized("MPI_Comm_rank");
    require_out(rank, "rank");
    *rank = comm_local(comm_handle).rank;
  });
}
GRIDMPI_WEAK(Comm_rank)

extern "C" int PMPI_Comm_compare(MPI_Comm comm1, MPI_Comm comm2, int* result) {
  return api_call(comm1, "MPI_Comm_compare", [&] {
    require_initialized("MPI_Comm_compare");
    require_out(result, "result");
    *result = comm_compare(comm(comm1), comm(comm2));
  });
}
GRIDMPI_WEAK(Comm_compare)

extern "C" int PMPI_Comm_dup(MPI_Comm comm_handle, MPI_Comm* newcomm) {
  return api_call(comm_handle, "MPI_Comm_dup", [&] {
    require_initialized("MPI_Comm_dup");
    require_out(newcomm, "newcomm");
    *newcomm = comm_dup(comm(comm_handle));
  });
}
GRIDMPI_WEAK(Comm_dup)

extern "C" int PMPI_Comm_dup_with_info(MPI_Comm comm_handle, MPI_Info info_handle, MPI_Comm* newcomm) {
  return api_call(comm_handle, "MPI_Comm_dup_with_info", [&] {
    require_initialized("MPI_Comm_dup_with_info");
    require_out(newcomm, "newcomm");
    Comm& parent = comm(comm_handle);
    std::vector<std::pair<std::string, std::string>> hints;
    if (info_handle != MPI_INFO_NULL) hints = info(info_handle).entries;
    MPI_Comm h = comm_dup(parent);
    // Unlike MPI_Comm_dup, the hints come from the info argument.
    comm(h).info_hints = std::move(hints);
    *newcomm = h;
  });
}
GRIDMPI_WEAK(Comm_dup_with_info)

extern "C" int PMPI_Comm_create(MPI_Comm comm_handle, MPI_Group group_handle, MPI_Comm* newcomm) {
  return api_call(comm_handle, "MPI_Comm_create", [&] {
    require_initialized("MPI_Comm_create");
    require_out(newcomm, "newcomm");
    Comm& parent = comm(comm_handle);
    *newcomm = comm_create(parent, group(group_handle));
  });
}
GRIDMPI_WEAK(Comm_create)

extern "C" int PMPI_Comm_split(MPI_Comm comm_handle, int color, int key, MPI_Comm* newcomm) {
  return api_call(comm_handle, "MPI_Comm_split", [&] {
    require_initialized("MPI_Comm_split");
    require_out(newcomm, "newcomm");
    *newcomm = comm_split(comm(comm_handle), color, key);
  });
}
GRIDMPI_WEAK(Comm_split)

extern "C" int PMPI_Comm_free(MPI_Comm* comm_handle) {
  MPI_Comm h = comm_handle ? *comm_handle : MPI_COMM_NULL;
  return api_call(h, "MPI_Comm_free", [&] {
    require_initialized("MPI_Comm_free");
    require_out(comm_handle, "comm");
    comm_free(h);
    *comm_handle = MPI_COMM_NULL;
  });
}
GRIDMPI_WEAK(Comm_free)

extern "C" int PMPI_Comm_set_name(MPI_Comm comm_handle, const char* comm_name) {
  return api_call(comm_handle, "MPI_Comm_set_name", [&] {
    require_initialized("MPI_Comm_set_name");
    require_out(comm_name, "comm_name");
    Comm& c = comm_local(comm_handle);
    // Longer names are truncated (the standard's rule), keeping room for the null.
    c.name.assign(comm_name, strnlen(comm_name, MPI_MAX_OBJECT_NAME - 1));
  });
}
GRIDMPI_WEAK(Comm_set_name)

extern "C" int PMPI_Comm_get_name(MPI_Comm comm_handle, char* comm_name, int* resultlen) {
  return api_call(comm_handle, "MPI_Comm_get_name", [&] {
    require_initialized("MPI_Comm_get_name");
    require_out(comm_name, "comm_name");
    require_out(resultlen, "resultlen");
    const std::string& name = comm_local(comm_handle).name;
    std::memcpy(comm_name, name.c_str(), name.size() + 1);
    *resultlen = static_cast<int>(name.size());
  });
}
GRIDMPI_WEAK(Comm_get_name)

extern "C" int PMPI_Comm_test_inter(MPI_Comm comm_handle, int* flag) {
  return api_call(comm_handle, "MPI_Comm_test_inter", [&] {
    require_initialized("MPI_Comm_test_inter");
    require_out(flag, "flag");
    *flag = comm_local(comm_handle).is_inter();
  });
}
GRIDMPI_WEAK(Comm_test_inter)

extern "C" int PMPI_Comm_remote_size(MPI_Comm comm_handle, int* size) {
  return api_call(comm_handle, "MPI_Comm_remote_size", [&] {
    require_initialized("MPI_Comm_remote_size");
    require_out(size, "size");
    Comm& c = comm_local(comm_handle);
    require(c.is_inter(), MPI_ERR_COMM, "MPI_Comm_remote_size needs an intercommunicator");
    *size = c.remote_group->size();
  });
}
GRIDMPI_WEAK(Comm_remote_size)

extern "C" int PMPI_Comm_remote_group(MPI_Comm comm_handle, MPI_Group* g) {
  return api_call(comm_handle, "MPI_Comm_remote_group", [&] {
    require_initialized("MPI_Comm_remote_group");
    require_out(g, "group");
    Comm& c = comm_local(comm_handle);
    require(c.is_inter(), MPI_ERR_COMM, "MPI_Comm_remote_group needs an intercommunicator");
    *g = add_group(*c.remote_group);
  });
}
GRIDMPI_WEAK(Comm_remote_group)

extern "C" int PMPI_Comm_set_info(MPI_Comm comm_handle, MPI_Info info_handle) {
  return api_call(comm_handle, "MPI_Comm_set_info", [&] {
    require_initialized("MPI_Comm_set_info");
    Comm& c = comm_local(comm_handle);
    for (auto& [key, value] : info(info_handle).entries) {
      bool replaced = false;
      for (auto& hint : c.info_hints)
        if (hint.first == key) {
          hint.second = value;
          replaced = true;
        }
      if (!replaced) c.info_hints.emplace_back(key, value);
    }
  });
}
GRIDMPI_WEAK(Comm_set_info)

extern "C" int PMPI_Comm_get_info(MPI_Comm comm_handle, MPI_Info* info_used) {
  return api_call(comm_handle, "MPI_Comm_get_info", [&] {
    require_initialized("MPI_Comm_get_info");
    require_out(info_used, "info_used");
    Comm& c = comm_local(comm_handle);
    auto obj = std::make_unique<Info>();
    obj->entries = c.info_hints;
    Info* raw = obj.get();
    raw->handle = info_table().add(std::move(obj));
    *info_used = raw->handle;
  });
}
GRIDMPI_WEAK(Comm_get_info)

namespace {

// The color of MPI_COMM_TYPE_SHARED: processes on one host share memory;
// the color is the lowest world rank on this process's host.
int host_color() {
  const Runtime& rt = runtime();
  const std::string& mine = rt.host_names.at(rt.world_rank);
  return static_cast<int>(std::find(rt.host_names.begin(), rt.host_names.end(), mine) - rt.host_names.begin());
}

// Splits parent by host, then each host's part by the instance of `type`
// this process is in (MPI_COMM_NULL when in none).  Collective over parent.
MPI_Comm split_by_resource(Comm& parent, const std::string& type, int key) {
  if (hw_resource_is_host(type)) return comm_split(parent, host_color(), key);
  MPI_Comm host = comm_split(parent, host_color(), key);
  std::optional<long> instance = hw_resource_instance(type);
  int color = instance && *instance >= 0 && *instance < (1L << 30) ? static_cast<int>(*instance) : MPI_UNDEFINED;
  MPI_Comm result = MPI_COMM_NULL;
  try {
    result = comm_split(comm(host), color, key);
  } catch (...) {
    comm_free(host);
    throw;
  }
  comm_free(host);
  return result;
}

// MPI_COMM_TYPE_HW_UNGUIDED: the first resource type, from the host down,
// whose split gives every process of parent a communicator smaller than
// parent; its name goes into info (when not MPI_INFO_NULL).
MPI_Comm split_unguided(Comm& parent, int key, MPI_Info info_handle) {
  std::vector<std::string> types = {"machine"};
  for (const std::string& t : hw_resource_types()) types.push_back(t);
  for (const std::string& type : types) {
    MPI_Comm sub = split_by_resource(parent, type, key);
    int ok = sub != MPI_COMM_NULL && comm(sub).size < parent.size ? 1 : 0, all = 0;
    coll::allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, parent);
    if (all) {
      if (info_handle != MPI_INFO_NULL) info(info_handle).set("mpi_hw_resource_type", type);
      return sub;
    }
    if (sub != MPI_COMM_NULL) comm_free(sub);
  }
  return MPI_COMM_NULL;
}

}  // namespace

extern "C" int PMPI_Comm_split_type(MPI_Comm comm_handle, int split_type, int key, MPI_Info info_handle,
                                    MPI_Comm* newcomm) {
  return api_call(comm_handle, "MPI_Comm_split_type", [&] {
    require_initialized("MPI_Comm_split_type");
    require_out(newcomm, "newcomm");
    Comm& parent = comm(comm_handle);
    std::optional<std::string> resource;
    if (info_handle != MPI_INFO_NULL) resource = info(info_handle).get("mpi_hw_resource_type");
    switch (split_type) {
      case MPI_UNDEFINED:
        *newcomm = comm_split(parent, MPI_UNDEFINED, key);
        return;
      case MPI_COMM_TYPE_SHARED:
        *newcomm = comm_split(parent, host_color(), key);
        return;
      case MPI_COMM_TYPE_HW_GUIDED:
        // MPI-4.0 7.4.2: without the key (or with a type unknown here) the
        // result is MPI_COMM_NULL; the call stays collective.
        if (!resource) {
          *newcomm = comm_split(parent, MPI_UNDEFINED, key);
          return;
        }
        *newcomm = split_by_resource(parent, *resource, key);
        return;
      case MPI_COMM_TYPE_HW_UNGUIDED:
        if (parent.is_inter())
          throw MpiError(MPI_ERR_COMM, "MPI_COMM_TYPE_HW_UNGUIDED needs an intracommunicator");
        *newcomm = split_unguided(parent, key, info_handle);
        return;
      default:
        throw MpiError(MPI_ERR_ARG, fmt::format("split_type {} is not MPI_COMM_TYPE_SHARED, MPI_COMM_TYPE_HW_GUIDED, "
                                                "MPI_COMM_TYPE_HW_UNGUIDED or MPI_UNDEFINED",
                                                split_type));
    }
  });
}
GRIDMPI_WEAK(Comm_split_type)

// A non-blocking collective (core/comm.cpp, comm_idup): the request
// completes when every process of comm has agreed on the new context;
// newcomm holds the handle at once but may be used only after that.
extern "C" int PMPI_Comm_idup(MPI_Comm comm_handle, MPI_Comm* newcomm, MPI_Request* request) {
  return api_call(comm_handle, "MPI_Comm_idup", [&] {
    require_initialized("MPI_Comm_idup");
    require_out(newcomm, "newcomm");
    require_out(request, "request");
    *request = comm_idup(comm(comm_handle), nullptr, newcomm);
  });
}
GRIDMPI_WEAK(Comm_idup)

// MPI-4.0: as MPI_Comm_idup, with the hints of `info` (read at the call:
// the user may free it before completion) instead of the parent's.
extern "C" int PMPI_Comm_idup_with_info(MPI_Comm comm_handle, MPI_Info info_handle, MPI_Comm* newcomm,
                                        MPI_Request* request) {
  return api_call(comm_handle, "MPI_Comm_idup_with_info", [&] {
    require_initialized("MPI_Comm_idup_with_info");
    require_out(newcomm, "newcomm");
    require_out(request, "request");
    Comm& parent = comm(comm_handle);
    std::vector<std::pair<std::string, std::string>> hints;
    if (info_handle != MPI_INFO_NULL) hints = info(info_handle).entries;
    *request = comm_idup(parent, &hints, newcomm);
  });
}
GRIDMPI_WEAK(Comm_idup_with_info)

extern "C" int PMPI_Comm_create_group(MPI_Comm comm_handle, MPI_Group group_handle, int tag, MPI_Comm* newcomm) {
  return api_call(comm_handle, "MPI_Comm_create_group", [&] {
    require_initialized("MPI_Comm_create_group");
    require_out(newcomm, "newcomm");
    Comm& parent = comm(comm_handle);
    *newcomm = comm_create_group(parent, group(group_handle), tag);
  });
}
GRIDMPI_WEAK(Comm_create_group)

extern "C" int PMPI_Intercomm_create(MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm, int remote_leader,
                                     int tag, MPI_Comm* newintercomm) {
  return api_call(local_comm, "MPI_Intercomm_create", [&] {
    require_initialized("MPI_Intercomm_create");
    require_out(newintercomm, "newintercomm");
    Comm& local = comm(local_comm);
    // peer_comm is significant only at the local leader.
    Comm* peer = local.rank == local_leader ? &comm(peer_comm) : &local;
    *newintercomm = intercomm_create(local, local_leader, *peer, remote_leader, tag);
  });
}
GRIDMPI_WEAK(Intercomm_create)

extern "C" int PMPI_Intercomm_merge(MPI_Comm intercomm, int high, MPI_Comm* newintracomm) {
  return api_call(intercomm, "MPI_Intercomm_merge", [&] {
    require_initialized("MPI_Intercomm_merge");
    require_out(newintracomm, "newintracomm");
    *newintracomm = intercomm_merge(comm(intercomm), high != 0);
  });
}
GRIDMPI_WEAK(Intercomm_merge)
