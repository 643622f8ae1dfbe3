// C API: MPI-4.0 sessions (MPI-4.0 chapter 11.3) and the constructors that
// need no parent communicator (MPI_Comm_create_from_group,
// MPI_Intercomm_create_from_groups).
//
// The first MPI_Session_init of a process starts the runtime if MPI_Init did
// not (core/runtime.cpp, session_started); the runtime ends with the last of
// MPI_Finalize and MPI_Session_finalize.  A process has two process sets,
// "mpi://WORLD" (every process of the job, all clusters) and "mpi://SELF";
// their names are matched without regard to case, as MPICH and Open MPI do.
#include <strings.h>

#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "core/api.hpp"
#include "core/errhandler.hpp"
#include "core/group.hpp"
#include "core/handle_table.hpp"
#include "core/info.hpp"
#include "core/runtime.hpp"

using namespace gridmpi;
using namespace gridmpi::core;

namespace {

struct Session {
  MPI_Session handle = MPI_SESSION_NULL;
  MPI_Errhandler errhandler = MPI_ERRORS_ARE_FATAL;
  int thread_level = MPI_THREAD_SINGLE;
  // The info given to MPI_Session_init, kept for MPI_Session_get_info.
  std::vector<std::pair<std::string, std::string>> hints;
};

HandleTable<Session>& session_table() {
  static HandleTable<Session> table(MPI_ERR_SESSION);
  return table;
}

Session& session(MPI_Session handle) {
  Session* s = session_table().find(handle);
  if (!s) throw MpiError(MPI_ERR_SESSION, fmt::format("invalid session {}", handle));
  return *s;
}

// Runs the session's error handler (MPI_ERRORS_ARE_FATAL for an invalid
// session); returns the code for the caller.
int handle_session_error(MPI_Session handle, int error_class, const char* function, const char* message) noexcept {
  try {
    Session* s = session_table().find(handle);
    // Session handlers have the communicator handlers' C signature with an MPI_Session.
    if (auto* fn = reinterpret_cast<MPI_Session_errhandler_function*>(
            user_errhandler(s ? s->errhandler : MPI_ERRORS_ARE_FATAL, error_class, function, message))) {
      MPI_Session session_arg = handle;
      int code_arg = error_class;
      fn(&session_arg, &code_arg);
    }
  } catch (...) {
    fatal_exit(error_class, fmt::format("{}: {} ({})", function, message, error_class_name(error_class)));
  }
  return error_class;
}

template <class Body>
int session_call(MPI_Session handle, const char* function, Body&& body) noexcept {
  return guarded_call([&](int error_class, const char* message) {
    return handle_session_error(handle, error_class, function, message);
  }, [&] {
    require_initialized(function);
    body();
  });
}

struct ProcessSet {
  const char* name;
  bool world;
};
constexpr ProcessSet process_sets[] = {{"mpi://WORLD", true}, {"mpi://SELF", false}};

const ProcessSet& process_set(const char* name) {
  require(name != nullptr, MPI_ERR_ARG, "pset_name is a null pointer");
  for (const ProcessSet& p : process_sets)
    if (strcasecmp(p.name, name) == 0) return p;
  throw MpiError(MPI_ERR_ARG, fmt::format("no process set named \"{}\" (gridmpi has mpi://WORLD and mpi://SELF)",
                                          name));
}

Group process_set_group(const ProcessSet& p) {
  const Runtime& rt = runtime();
  if (!p.world) return make_group({rt.world_rank}, rt.world_rank);
  std::vector<int> all(static_cast<std::size_t>(rt.world_size));
  for (int r = 0; r < rt.world_size; ++r) all[static_cast<std::size_t>(r)] = r;
  return make_group(std::move(all), rt.world_rank);
}

MPI_Info new_info(std::vector<std::pair<std::string, std::string>> entries) {
  auto i = std::make_unique<Info>();
  i->entries = std::move(entries);
  Info* raw = i.get();
  raw->handle = info_table().add(std::move(i));
  return raw->handle;
}

std::string checked_stringtag(const char* stringtag) {
  require(stringtag != nullptr, MPI_ERR_ARG, "stringtag is a null pointer");
  std::string tag(stringtag);
  if (tag.size() >= MPI_MAX_STRINGTAG_LEN)
    throw MpiError(MPI_ERR_ARG, fmt::format("stringtag is {} characters long; MPI_MAX_STRINGTAG_LEN is {}",
                                            tag.size(), MPI_MAX_STRINGTAG_LEN));
  return tag;
}

// The new communicator gets the error handler given (not its parent's).
MPI_Comm with_errhandler(MPI_Comm handle, MPI_Errhandler errhandler) {
  replace_errhandler(comm(handle).errhandler, errhandler);
  return handle;
}

}  // namespace

extern "C" int PMPI_Session_init(MPI_Info info_handle, MPI_Errhandler errhandler_handle, MPI_Session* session_out) {
  // Errors before the session exists go to MPI_ERRORS_ARE_FATAL, unless the
  // handler given is MPI_ERRORS_RETURN (MPI-4.0 11.3.1 asks for the handler
  // given; a user function has no session to be called with).
  int level = MPI_THREAD_SINGLE;
  std::vector<std::pair<std::string, std::string>> hints;
  auto fail = [&](int error_class, const std::string& message) {
    if (errhandler_handle == MPI_ERRORS_RETURN) return error_class;
    ApiLock lock;
    return handle_error(MPI_COMM_WORLD, error_class, "MPI_Session_init", message.c_str());
  };
  try {
    {
      ApiLock lock;
      require_out(session_out, "session");
      errhandler(errhandler_handle);  // validates
      if (info_handle != MPI_INFO_NULL) hints = info(info_handle).entries;
    }
    level = session_started();
  } catch (const MpiError& e) {
    return fail(e.error_class(), e.what());
  } catch (const std::exception& e) {
    return fail(MPI_ERR_INTERN, e.what());
  }
  ApiLock lock;
  auto s = std::make_unique<Session>();
  s->thread_level = level;
  s->errhandler = errhandler_handle;
  retain_errhandler(errhandler_handle);
  s->hints = std::move(hints);
  Session* raw = s.get();
  raw->handle = session_table().add(std::move(s));
  *session_out = raw->handle;
  return MPI_SUCCESS;
}
GRIDMPI_WEAK(Session_init)

extern "C" int PMPI_Session_finalize(MPI_Session* session_handle) {
  MPI_Session handle = session_handle ? *session_handle : MPI_SESSION_NULL;
  int rc = session_call(handle, "MPI_Session_finalize", [&] {
    require_out(session_handle, "session");
    Session& s = session(handle);
    release_errhandler(s.errhandler);
    session_table().release(handle);
    *session_handle = MPI_SESSION_NULL;
  });
  if (rc != MPI_SUCCESS) return rc;
  // The last session to end after (or without) MPI_Finalize shuts MPI down,
  // outside the big lock's call above (runtime.cpp, "Locking").
  return lifecycle_call("MPI_Session_finalize", [] { session_ended(); });
}
GRIDMPI_WEAK(Session_finalize)

extern "C" int PMPI_Session_get_num_psets(MPI_Session handle, MPI_Info info_handle, int* npset_names) {
  return session_call(handle, "MPI_Session_get_num_psets", [&] {
    session(handle);
    if (info_handle != MPI_INFO_NULL) info(info_handle);
    require_out(npset_names, "npset_names");
    *npset_names = static_cast<int>(std::size(process_sets));
  });
}
GRIDMPI_WEAK(Session_get_num_psets)

extern "C" int PMPI_Session_get_nth_pset(MPI_Session handle, MPI_Info info_handle, int n, int* pset_len,
                                         char* pset_name) {
  return session_call(handle, "MPI_Session_get_nth_pset", [&] {
    session(handle);
    if (info_handle != MPI_INFO_NULL) info(info_handle);
    require_out(pset_len, "pset_len");
    const int count = static_cast<int>(std::size(process_sets));
    if (n < 0 || n >= count)
      throw MpiError(MPI_ERR_ARG, fmt::format("n = {} is not the number of a process set (0..{})", n, count - 1));
    const char* name = process_sets[n].name;
    const int needed = static_cast<int>(std::strlen(name)) + 1;
    // pset_len 0 asks for the length (the null included); otherwise at most
    // pset_len characters are written, the null included.
    if (*pset_len > 0) {
      require(pset_name != nullptr, MPI_ERR_ARG, "pset_name is a null pointer");
      const int copy = std::min(*pset_len - 1, needed - 1);
      std::memcpy(pset_name, name, static_cast<std::size_t>(copy));
      pset_name[copy] = '\0';
    }
    *pset_len = needed;
  });
}
GRIDMPI_WEAK(Session_get_nth_pset)

extern "C" int PMPI_Session_get_info(MPI_Session handle, MPI_Info* info_used) {
  return session_call(handle, "MPI_Session_get_info", [&] {
    const Session& s = session(handle);
    require_out(info_used, "info_used");
    std::vector<std::pair<std::string, std::string>> entries;
    for (const auto& kv : s.hints)
      if (kv.first != "thread_level") entries.push_back(kv);
    // The level provided, whatever was asked for.
    entries.emplace_back("thread_level", thread_level_name(s.thread_level));
    *info_used = new_info(std::move(entries));
  });
}
GRIDMPI_WEAK(Session_get_info)

extern "C" int PMPI_Session_get_pset_info(MPI_Session handle, const char* pset_name, MPI_Info* info_out) {
  return session_call(handle, "MPI_Session_get_pset_info", [&] {
    session(handle);
    require_out(info_out, "info");
    const ProcessSet& p = process_set(pset_name);
    *info_out = new_info({{"mpi_size", std::to_string(p.world ? runtime().world_size : 1)}});
  });
}
GRIDMPI_WEAK(Session_get_pset_info)

extern "C" int PMPI_Session_set_errhandler(MPI_Session handle, MPI_Errhandler errhandler_handle) {
  return session_call(handle, "MPI_Session_set_errhandler", [&] {
    replace_errhandler(session(handle).errhandler, errhandler_handle);
  });
}
GRIDMPI_WEAK(Session_set_errhandler)

extern "C" int PMPI_Session_get_errhandler(MPI_Session handle, MPI_Errhandler* errhandler_out) {
  return session_call(handle, "MPI_Session_get_errhandler", [&] {
    const Session& s = session(handle);
    require_out(errhandler_out, "errhandler");
    retain_errhandler(s.errhandler);  // the caller owns the handle returned
    *errhandler_out = s.errhandler;
  });
}
GRIDMPI_WEAK(Session_get_errhandler)

extern "C" int PMPI_Session_call_errhandler(MPI_Session handle, int errorcode) {
  int rc = session_call(handle, "MPI_Session_call_errhandler", [&] {
    session(handle);
    error_class_of(errorcode);  // an unknown code is MPI_ERR_ARG
  });
  if (rc != MPI_SUCCESS) return rc;
  ApiLock lock;
  handle_session_error(handle, errorcode, "MPI_Session_call_errhandler", "called by the program");
  return MPI_SUCCESS;
}
GRIDMPI_WEAK(Session_call_errhandler)

extern "C" int PMPI_Group_from_session_pset(MPI_Session handle, const char* pset_name, MPI_Group* newgroup) {
  return session_call(handle, "MPI_Group_from_session_pset", [&] {
    session(handle);
    require_out(newgroup, "newgroup");
    *newgroup = add_group(process_set_group(process_set(pset_name)));
  });
}
GRIDMPI_WEAK(Group_from_session_pset)

extern "C" int PMPI_Comm_create_from_group(MPI_Group group_handle, const char* stringtag, MPI_Info info_handle,
                                           MPI_Errhandler errhandler_handle, MPI_Comm* newcomm) {
  return api_call(MPI_COMM_NULL, "MPI_Comm_create_from_group", [&] {
    require_initialized("MPI_Comm_create_from_group");
    require_out(newcomm, "newcomm");
    std::string tag = checked_stringtag(stringtag);
    if (info_handle != MPI_INFO_NULL) info(info_handle);  // validates; no hints are used
    errhandler(errhandler_handle);
    if (group_handle == MPI_GROUP_EMPTY) {
      *newcomm = MPI_COMM_NULL;
      return;
    }
    *newcomm = with_errhandler(comm_create_from_group(group(group_handle), tag), errhandler_handle);
  });
}
GRIDMPI_WEAK(Comm_create_from_group)

extern "C" int PMPI_Intercomm_create_from_groups(MPI_Group local_group, int local_leader, MPI_Group remote_group,
                                                 int remote_leader, const char* stringtag, MPI_Info info_handle,
                                                 MPI_Errhandler errhandler_handle, MPI_Comm* newintercomm) {
  return api_call(MPI_COMM_NULL, "MPI_Intercomm_create_from_groups", [&] {
    require_initialized("MPI_Intercomm_create_from_groups");
    require_out(newintercomm, "newintercomm");
    std::string tag = checked_stringtag(stringtag);
    if (info_handle != MPI_INFO_NULL) info(info_handle);
    errhandler(errhandler_handle);
    *newintercomm = with_errhandler(intercomm_create_from_groups(group(local_group), local_leader,
                                                                 group(remote_group), remote_leader, tag),
                                    errhandler_handle);
  });
}
GRIDMPI_WEAK(Intercomm_create_from_groups)

extern "C" MPI_Fint PMPI_Session_c2f(MPI_Session handle) { return static_cast<MPI_Fint>(handle); }
GRIDMPI_WEAK(Session_c2f)

extern "C" MPI_Session PMPI_Session_f2c(MPI_Fint handle) { return static_cast<MPI_Session>(handle); }
GRIDMPI_WEAK(Session_f2c)
