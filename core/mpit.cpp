// The MPI tool information interface (MPI-3.1 chapter 14), C only.
//
// Control variables are gridmpi's configuration parameters (conf/registry.hpp),
// one cvar per declared parameter, named as in the registry ("tcp.socbuf").
// Their values are read once at start-up, so every cvar has scope
// MPI_T_SCOPE_READONLY and MPI_T_cvar_write returns MPI_T_ERR_CVAR_SET_NEVER.
// Types: integer -> MPI_LONG_LONG, boolean -> MPI_INT (0/1), float ->
// MPI_DOUBLE, string and choice -> MPI_CHAR (count = length + 1; a choice is
// its name, not an MPI_T enumeration: there are no enumerations).  Verbosity
// from the level: user/tuner/developer -> MPI_T_VERBOSITY_{USER,TUNER,MPIDEV}_BASIC.
//
// Performance variables are what the layers register (core/mpit_pvars.hpp):
// counters (MPI_T_PVAR_CLASS_COUNTER, MPI_UNSIGNED_LONG_LONG) and timers
// (MPI_T_PVAR_CLASS_TIMER, MPI_DOUBLE seconds), enumtype MPI_T_ENUM_NULL,
// bound to no object (MPI_T_pvar_handle_alloc ignores obj_handle; count 1).
// None is continuous: a new handle is stopped and counts only while started
// (MPI_T_pvar_start of a started handle and MPI_T_pvar_stop of a stopped one
// change nothing, as MPI_T_PVAR_ALL_HANDLES skips them).  A handle reads what
// the underlying value grew by during its started intervals since its
// allocation or its last MPI_T_pvar_reset: it keeps the sum of the finished
// intervals and the value at its last start.  MPI_T_pvar_reset works, so
// every pvar reports readonly = 0 (MPI-3.1 14.3.7: readonly says whether the
// variable can be written *or reset*; read-only variables cannot be reset,
// and MPI_T_PVAR_ALL_HANDLES would skip them), yet none can be written:
// MPI_T_pvar_write returns MPI_T_ERR_PVAR_NO_WRITE.  Not atomic:
// MPI_T_pvar_readreset returns MPI_T_ERR_PVAR_NO_ATOMIC.  A handle belongs
// to its session (with another one it is MPI_T_ERR_INVALID_HANDLE);
// MPI_T_pvar_session_free frees its handles.  MPI_T_PVAR_ALL_HANDLES is for
// start, stop and reset (every handle of the session); read, write and
// readreset take one handle.  Values are read when asked, so before MPI_Init
// and after MPI_Finalize a handle sees whatever the counters do.
//
// Categories: one per name prefix before the first '.' ("tcp", "impi"...),
// holding the cvars and pvars of that prefix.
//
// Indices stay valid for the life of the process: the tables only grow (a
// parameter or pvar registered after the first MPI_T_init_thread is appended
// at the next outermost one, and MPI_T_category_changed's stamp moves).
// Cvar values are taken at every outermost MPI_T_init_thread.
//
// MPI_T functions may be called from any thread, before MPI_Init and after
// MPI_Finalize: they take their own mutex, never the big lock, never call an
// error handler and return MPI_T_ERR_* codes.  Owner: core/.
#include <mpi.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "conf/registry.hpp"
#include "core/api.hpp"
#include "core/mpit_pvars.hpp"

namespace gridmpi::core {

namespace pvars {
// The registered pvars (core/mpit_pvars.hpp), in registration order.
std::vector<Pvar>& registered() {
  static std::vector<Pvar>* list = new std::vector<Pvar>;  // never destroyed
  return *list;
}
std::mutex& registered_mutex() {
  static std::mutex* m = new std::mutex;
  return *m;
}
void register_pvar(const Pvar& pvar) {
  std::lock_guard lock(registered_mutex());
  registered().push_back(pvar);
}
}  // namespace pvars

namespace {

struct Cvar {
  std::string name;
  std::string description;
  std::string type;  // registry type name
  MPI_Datatype datatype = MPI_DATATYPE_NULL;
  int verbosity = MPI_T_VERBOSITY_USER_BASIC;
  int category = -1;
  // The value at the last outermost MPI_T_init_thread.
  bool valid = false;  // false: the configured value is malformed (reads fail)
  std::string text;    // canonical text
  long long integer = 0;
  double real = 0.0;
};

struct PvarEntry {
  std::string name;
  std::string description;
  pvars::Kind kind = pvars::Kind::counter;
  int verbosity = MPI_T_VERBOSITY_USER_BASIC;
  int category = -1;
  unsigned long long (*read_count)() = nullptr;
  double (*read_seconds)() = nullptr;
};

struct Category {
  std::string name;
  std::string description;
  std::vector<int> cvars;
  std::vector<int> pvars;
};

struct CvarHandleRec {
  int index;
};

// A pvar's value: a counter's count or a timer's seconds (the other stays 0).
struct PvarValue {
  unsigned long long count = 0;
  double seconds = 0.0;
};

struct PvarHandleRec {
  int index = -1;
  bool started = false;
  PvarValue total;     // what the finished started intervals added since allocation or reset
  PvarValue at_start;  // the pvar's value when the running interval began (or at the reset in it)
};

struct PvarSessionRec {
  std::vector<std::unique_ptr<PvarHandleRec>> handles;
};

struct MpitState {
  std::mutex mutex;
  int init_count = 0;
  int stamp = 0;  // MPI_T_category_changed
  std::vector<Cvar> cvars;
  std::vector<PvarEntry> pvars;
  std::vector<Category> categories;
  std::unordered_set<CvarHandleRec*> cvar_handles;
  std::unordered_set<PvarSessionRec*> sessions;
};

MpitState& mpit() {
  static MpitState* state = new MpitState;  // never destroyed: callable from atexit handlers
  return *state;
}

int verbosity_of(conf::Level level) {
  switch (level) {
    case conf::Level::user:
      return MPI_T_VERBOSITY_USER_BASIC;
    case conf::Level::tuner:
      return MPI_T_VERBOSITY_TUNER_BASIC;
    case conf::Level::developer:
      return MPI_T_VERBOSITY_MPIDEV_BASIC;
  }
  return MPI_T_VERBOSITY_MPIDEV_BASIC;
}

MPI_Datatype datatype_of(const std::string& type) {
  if (type == "integer") return MPI_LONG_LONG;
  if (type == "boolean") return MPI_INT;
  if (type == "float") return MPI_DOUBLE;
  return MPI_CHAR;  // string, choice
}

std::string prefix_of(const std::string& name) {
  auto dot = name.find('.');
  return dot == std::string::npos ? std::string("gridmpi") : name.substr(0, dot);
}

void take_value(Cvar& cvar, const conf::ParamBase& param) {
  try {
    cvar.text = param.canonical_text();
    cvar.valid = true;
  } catch (const conf::ConfigError&) {
    cvar.text.clear();
    cvar.valid = false;
    return;
  }
  if (cvar.type == "integer") cvar.integer = std::strtoll(cvar.text.c_str(), nullptr, 10);
  if (cvar.type == "boolean") cvar.integer = cvar.text == "true" ? 1 : 0;
  if (cvar.type == "float") cvar.real = std::strtod(cvar.text.c_str(), nullptr);
}

// The index of the category of `name`'s prefix, made when missing.
int category_of(MpitState& s, const std::string& name) {
  std::string prefix = prefix_of(name);
  auto cat =
      std::find_if(s.categories.begin(), s.categories.end(), [&](const Category& k) { return k.name == prefix; });
  if (cat == s.categories.end()) {
    s.categories.push_back(Category{prefix, "gridmpi control and performance variables " + prefix + ".*", {}, {}});
    cat = s.categories.end() - 1;
  }
  return static_cast<int>(cat - s.categories.begin());
}

// Appends the parameters and pvars not seen yet and refreshes every cvar
// value.  Called with the mutex held at the outermost MPI_T_init_thread.
void refresh_tables(MpitState& s) {
  bool grew = false;
  for (const conf::ParamBase* param : conf::all_parameters()) {
    const conf::ParamInfo& info = param->info();
    auto it = std::find_if(s.cvars.begin(), s.cvars.end(), [&](const Cvar& c) { return c.name == info.name; });
    if (it == s.cvars.end()) {
      int cat = category_of(s, info.name);
      s.categories[cat].cvars.push_back(static_cast<int>(s.cvars.size()));
      Cvar& c = s.cvars.emplace_back();
      c.name = info.name;
      c.description = info.description;
      if (!info.unit.empty()) c.description += " (" + info.unit + ")";
      c.type = info.type;
      c.datatype = datatype_of(info.type);
      c.verbosity = verbosity_of(info.level);
      c.category = cat;
      it = s.cvars.end() - 1;
      grew = true;
    }
    take_value(*it, *param);
  }
  // The registration list only grows: its entries past ours are new.
  std::lock_guard lock(pvars::registered_mutex());
  const std::vector<pvars::Pvar>& registered = pvars::registered();
  for (std::size_t i = s.pvars.size(); i < registered.size(); ++i) {
    const pvars::Pvar& r = registered[i];
    int cat = category_of(s, r.name);
    s.categories[cat].pvars.push_back(static_cast<int>(s.pvars.size()));
    PvarEntry& p = s.pvars.emplace_back();
    p.name = r.name;
    p.description = r.description;
    p.kind = r.kind;
    p.verbosity = r.verbosity;
    p.category = cat;
    p.read_count = r.read_count;
    p.read_seconds = r.read_seconds;
    grew = true;
  }
  if (grew) ++s.stamp;
}

// The standard's rule for (string, length) outputs: len NULL -> nothing;
// buf NULL or *len 0 -> *len = length needed (terminator included); else
// copy at most *len - 1 characters, terminate, *len = characters stored + 1.
void put_string(const std::string& value, char* buf, int* len) {
  if (len == nullptr) return;
  if (buf == nullptr || *len <= 0) {
    *len = static_cast<int>(value.size()) + 1;
    return;
  }
  std::size_t n = std::min(value.size(), static_cast<std::size_t>(*len - 1));
  std::memcpy(buf, value.data(), n);
  buf[n] = '\0';
  *len = static_cast<int>(n) + 1;
}

// Runs body(state) under the mutex when MPI_T is initialized; maps
// exceptions to MPI_T_ERR_MEMORY / MPI_T_ERR_INVALID.
template <class Body>
int t_call(Body&& body) noexcept {
  try {
    MpitState& s = mpit();
    std::lock_guard<std::mutex> lock(s.mutex);
    if (s.init_count == 0) return MPI_T_ERR_NOT_INITIALIZED;
    return body(s);
  } catch (const std::bad_alloc&) {
    return MPI_T_ERR_MEMORY;
  } catch (...) {
    return MPI_T_ERR_INVALID;
  }
}

bool valid_cvar(const MpitState& s, int index) { return index >= 0 && index < static_cast<int>(s.cvars.size()); }
bool valid_category(const MpitState& s, int index) {
  return index >= 0 && index < static_cast<int>(s.categories.size());
}
bool valid_pvar(const MpitState& s, int index) { return index >= 0 && index < static_cast<int>(s.pvars.size()); }

PvarSessionRec* find_session(const MpitState& s, MPI_T_pvar_session session) {
  auto* rec = reinterpret_cast<PvarSessionRec*>(session);
  return s.sessions.count(rec) != 0 ? rec : nullptr;
}

// The handle of `session`, or null (also for MPI_T_PVAR_ALL_HANDLES and for a
// handle of another session).
PvarHandleRec* find_handle(const PvarSessionRec& session, MPI_T_pvar_handle handle) {
  auto* rec = reinterpret_cast<PvarHandleRec*>(handle);
  for (const auto& h : session.handles)
    if (h.get() == rec) return rec;
  return nullptr;
}

PvarValue read_now(const PvarEntry& p) {
  PvarValue v;
  if (p.kind == pvars::Kind::counter) {
    if (p.read_count != nullptr) v.count = p.read_count();
  } else if (p.read_seconds != nullptr) {
    v.seconds = p.read_seconds();
  }
  return v;
}

// What a handle reads: the finished intervals plus the running one.
PvarValue handle_value(const PvarEntry& p, const PvarHandleRec& h) {
  PvarValue v = h.total;
  if (h.started) {
    PvarValue now = read_now(p);
    v.count += now.count - h.at_start.count;  // unsigned: a wrapped counter still gives the growth
    v.seconds += now.seconds - h.at_start.seconds;
  }
  return v;
}

void start_handle(const PvarEntry& p, PvarHandleRec& h) {
  if (h.started) return;
  h.at_start = read_now(p);
  h.started = true;
}

void stop_handle(const PvarEntry& p, PvarHandleRec& h) {
  if (!h.started) return;
  h.total = handle_value(p, h);
  h.started = false;
}

void reset_handle(const PvarEntry& p, PvarHandleRec& h) {
  h.total = PvarValue{};
  if (h.started) h.at_start = read_now(p);
}

// MPI_T_pvar_start/stop/reset: op on one handle of the session or, for
// MPI_T_PVAR_ALL_HANDLES, on each of them (none can fail: no pvar is
// continuous or read-only).
template <class Op>
int each_handle(MPI_T_pvar_session session, MPI_T_pvar_handle handle, Op op) {
  return t_call([&](MpitState& s) {
    PvarSessionRec* rec = find_session(s, session);
    if (rec == nullptr) return MPI_T_ERR_INVALID_SESSION;
    if (handle == MPI_T_PVAR_ALL_HANDLES) {
      for (auto& h : rec->handles) op(s.pvars[h->index], *h);
      return MPI_SUCCESS;
    }
    PvarHandleRec* h = find_handle(*rec, handle);
    if (h == nullptr) return MPI_T_ERR_INVALID_HANDLE;
    op(s.pvars[h->index], *h);
    return MPI_SUCCESS;
  });
}

// MPI_T_pvar_read/write/readreset: body(pvar, handle) on one handle of
// the session (MPI_T_PVAR_ALL_HANDLES is not allowed there).
template <class Body>
int one_handle(MPI_T_pvar_session session, MPI_T_pvar_handle handle, Body body) {
  return t_call([&](MpitState& s) {
    PvarSessionRec* rec = find_session(s, session);
    if (rec == nullptr) return MPI_T_ERR_INVALID_SESSION;
    PvarHandleRec* h = find_handle(*rec, handle);
    if (h == nullptr) return MPI_T_ERR_INVALID_HANDLE;
    return body(s.pvars[h->index], *h);
  });
}

}  // namespace

}  // namespace gridmpi::core

using gridmpi::core::MpitState;
namespace t = gridmpi::core;

extern "C" int PMPI_T_init_thread(int required, int* provided) {
  try {
    MpitState& s = t::mpit();
    std::lock_guard<std::mutex> lock(s.mutex);
    if (s.init_count == 0) t::refresh_tables(s);
    ++s.init_count;
    if (provided != nullptr) *provided = std::clamp(required, MPI_THREAD_SINGLE, MPI_THREAD_MULTIPLE);
    return MPI_SUCCESS;
  } catch (const std::bad_alloc&) {
    return MPI_T_ERR_MEMORY;
  } catch (...) {
    return MPI_T_ERR_CANNOT_INIT;
  }
}
GRIDMPI_WEAK(T_init_thread)

extern "C" int PMPI_T_finalize(void) {
  return t::t_call([](MpitState& s) {
    if (--s.init_count == 0) {
      // The outermost finalize frees every handle and session.
      for (auto* h : s.cvar_handles) delete h;
      s.cvar_handles.clear();
      for (auto* p : s.sessions) delete p;
      s.sessions.clear();
    }
    return MPI_SUCCESS;
  });
}
GRIDMPI_WEAK(T_finalize)

// ------------------------------------------------------------- enumerations

extern "C" int PMPI_T_enum_get_info(MPI_T_enum, int*, char*, int*) {
  return t::t_call([](MpitState&) { return MPI_T_ERR_INVALID_HANDLE; });  // no enumeration exists
}
GRIDMPI_WEAK(T_enum_get_info)

extern "C" int PMPI_T_enum_get_item(MPI_T_enum, int, int*, char*, int*) {
  return t::t_call([](MpitState&) { return MPI_T_ERR_INVALID_HANDLE; });
}
GRIDMPI_WEAK(T_enum_get_item)

// --------------------------------------------------------- control variables

extern "C" int PMPI_T_cvar_get_num(int* num_cvar) {
  return t::t_call([&](MpitState& s) {
    if (num_cvar == nullptr) return MPI_T_ERR_INVALID;
    *num_cvar = static_cast<int>(s.cvars.size());
    return MPI_SUCCESS;
  });
}
GRIDMPI_WEAK(T_cvar_get_num)

extern "C" int PMPI_T_cvar_get_info(int cvar_index, char* name, int* name_len, int* verbosity,
                                    MPI_Datatype* datatype, MPI_T_enum* enumtype, char* desc, int* desc_len,
                                    int* bind, int* scope) {
  return t::t_call([&](MpitState& s) {
    if (!t::valid_cvar(s, cvar_index)) return MPI_T_ERR_INVALID_INDEX;
    const t::Cvar& c = s.cvars[cvar_index];
    t::put_string(c.name, name, name_len);
    if (verbosity) *verbosity = c.verbosity;
    if (datatype) *datatype = c.datatype;
    if (enumtype) *enumtype = MPI_T_ENUM_NULL;
    t::put_string(c.description, desc, desc_len);
    if (bind) *bind = MPI_T_BIND_NO_OBJECT;
    if (scope) *scope = MPI_T_SCOPE_READONLY;
    return MPI_SUCCESS;
  });
}
GRIDMPI_WEAK(T_cvar_get_info)

extern "C" int PMPI_T_cvar_get_index(const char* name, int* cvar_index) {
  return t::t_call([&](MpitState& s) {
    if (name == nullptr || cvar_index == nullptr) return MPI_T_ERR_INVALID;
    for (std::size_t i = 0; i < s.cvars.size(); ++i) {
      if (s.cvars[i].name == name) {
        *cvar_index = static_cast<int>(i);
        return MPI_SUCCESS;
      }
    }
    return MPI_T_ERR_INVALID_NAME;
  });
}
GRIDMPI_WEAK(T_cvar_get_index)

extern "C" int PMPI_T_cvar_handle_alloc(int cvar_index, void*, MPI_T_cvar_handle* handle, int* count) {
  return t::t_call([&](MpitState& s) {
    if (!t::valid_cvar(s, cvar_index)) return MPI_T_ERR_INVALID_INDEX;
    if (handle == nullptr || count == nullptr) return MPI_T_ERR_INVALID;
    const t::Cvar& c = s.cvars[cvar_index];
    auto* rec = new t::CvarHandleRec{cvar_index};
    try {
      s.cvar_handles.insert(rec);
    } catch (...) {
      delete rec;
      throw;
    }
    *handle = reinterpret_cast<MPI_T_cvar_handle>(rec);
    *count = c.datatype == MPI_CHAR ? static_cast<int>(c.text.size()) + 1 : 1;
    return MPI_SUCCESS;
  });
}
GRIDMPI_WEAK(T_cvar_handle_alloc)

extern "C" int PMPI_T_cvar_handle_free(MPI_T_cvar_handle* handle) {
  return t::t_call([&](MpitState& s) {
    if (handle == nullptr) return MPI_T_ERR_INVALID;
    auto* rec = reinterpret_cast<t::CvarHandleRec*>(*handle);
    if (s.cvar_handles.erase(rec) == 0) return MPI_T_ERR_INVALID_HANDLE;
    delete rec;
    *handle = MPI_T_CVAR_HANDLE_NULL;
    return MPI_SUCCESS;
  });
}
GRIDMPI_WEAK(T_cvar_handle_free)

extern "C" int PMPI_T_cvar_read(MPI_T_cvar_handle handle, void* buf) {
  return t::t_call([&](MpitState& s) {
    auto* rec = reinterpret_cast<t::CvarHandleRec*>(handle);
    if (s.cvar_handles.count(rec) == 0) return MPI_T_ERR_INVALID_HANDLE;
    if (buf == nullptr) return MPI_T_ERR_INVALID;
    const t::Cvar& c = s.cvars[rec->index];
    if (!c.valid) return MPI_T_ERR_INVALID;  // malformed configured value (MPI_Init reports it)
    if (c.datatype == MPI_LONG_LONG) {
      long long v = c.integer;
      std::memcpy(buf, &v, sizeof v);
    } else if (c.datatype == MPI_INT) {
      int v = static_cast<int>(c.integer);
      std::memcpy(buf, &v, sizeof v);
    } else if (c.datatype == MPI_DOUBLE) {
      double v = c.real;
      std::memcpy(buf, &v, sizeof v);
    } else {
      std::memcpy(buf, c.text.c_str(), c.text.size() + 1);
    }
    return MPI_SUCCESS;
  });
}
GRIDMPI_WEAK(T_cvar_read)

extern "C" int PMPI_T_cvar_write(MPI_T_cvar_handle handle, const void*) {
  return t::t_call([&](MpitState& s) {
    if (s.cvar_handles.count(reinterpret_cast<t::CvarHandleRec*>(handle)) == 0) return MPI_T_ERR_INVALID_HANDLE;
    return MPI_T_ERR_CVAR_SET_NEVER;  // every parameter is read once at start-up
  });
}
GRIDMPI_WEAK(T_cvar_write)

// ----------------------------------------------------- performance variables

extern "C" int PMPI_T_pvar_get_num(int* num_pvar) {
  return t::t_call([&](MpitState& s) {
    if (num_pvar == nullptr) return MPI_T_ERR_INVALID;
    *num_pvar = static_cast<int>(s.pvars.size());
    return MPI_SUCCESS;
  });
}
GRIDMPI_WEAK(T_pvar_get_num)

extern "C" int PMPI_T_pvar_get_info(int pvar_index, char* name, int* name_len, int* verbosity, int* var_class,
                                    MPI_Datatype* datatype, MPI_T_enum* enumtype, char* desc, int* desc_len,
                                    int* bind, int* readonly, int* continuous, int* atomic) {
  return t::t_call([&](MpitState& s) {
    if (!t::valid_pvar(s, pvar_index)) return MPI_T_ERR_INVALID_INDEX;
    const t::PvarEntry& p = s.pvars[pvar_index];
    bool counter = p.kind == t::pvars::Kind::counter;
    t::put_string(p.name, name, name_len);
    if (verbosity) *verbosity = p.verbosity;
    if (var_class) *var_class = counter ? MPI_T_PVAR_CLASS_COUNTER : MPI_T_PVAR_CLASS_TIMER;
    if (datatype) *datatype = counter ? MPI_UNSIGNED_LONG_LONG : MPI_DOUBLE;
    if (enumtype) *enumtype = MPI_T_ENUM_NULL;
    t::put_string(p.description, desc, desc_len);
    if (bind) *bind = MPI_T_BIND_NO_OBJECT;
    if (readonly) *readonly = 0;  // resettable, though not writable (header comment)
    if (continuous) *continuous = 0;
    if (atomic) *atomic = 0;
    return MPI_SUCCESS;
  });
}
GRIDMPI_WEAK(T_pvar_get_info)

extern "C" int PMPI_T_pvar_get_index(const char* name, int var_class, int* pvar_index) {
  return t::t_call([&](MpitState& s) {
    if (name == nullptr || pvar_index == nullptr) return MPI_T_ERR_INVALID;
    for (std::size_t i = 0; i < s.pvars.size(); ++i) {
      const t::PvarEntry& p = s.pvars[i];
      int p_class = p.kind == t::pvars::Kind::counter ? MPI_T_PVAR_CLASS_COUNTER : MPI_T_PVAR_CLASS_TIMER;
      if (p.name == name && p_class == var_class) {
        *pvar_index = static_cast<int>(i);
        return MPI_SUCCESS;
      }
    }
    return MPI_T_ERR_INVALID_NAME;
  });
}
GRIDMPI_WEAK(T_pvar_get_index)

extern "C" int PMPI_T_pvar_session_create(MPI_T_pvar_session* session) {
  return t::t_call([&](MpitState& s) {
    if (session == nullptr) return MPI_T_ERR_INVALID;
    auto* rec = new t::PvarSessionRec;
    try {
      s.sessions.insert(rec);
    } catch (...) {
      delete rec;
      throw;
    }
    *session = reinterpret_cast<MPI_T_pvar_session>(rec);
    return MPI_SUCCESS;
  });
}
GRIDMPI_WEAK(T_pvar_session_create)

extern "C" int PMPI_T_pvar_session_free(MPI_T_pvar_session* session) {
  return t::t_call([&](MpitState& s) {
    if (session == nullptr) return MPI_T_ERR_INVALID;
    auto* rec = reinterpret_cast<t::PvarSessionRec*>(*session);
    if (s.sessions.erase(rec) == 0) return MPI_T_ERR_INVALID_SESSION;
    delete rec;  // and its handles
    *session = MPI_T_PVAR_SESSION_NULL;
    return MPI_SUCCESS;
  });
}
GRIDMPI_WEAK(T_pvar_session_free)

extern "C" int PMPI_T_pvar_handle_alloc(MPI_T_pvar_session session, int pvar_index, void*, MPI_T_pvar_handle* handle,
                                        int* count) {
  return t::t_call([&](MpitState& s) {
    t::PvarSessionRec* rec = t::find_session(s, session);
    if (rec == nullptr) return MPI_T_ERR_INVALID_SESSION;
    if (!t::valid_pvar(s, pvar_index)) return MPI_T_ERR_INVALID_INDEX;
    if (handle == nullptr || count == nullptr) return MPI_T_ERR_INVALID;
    // Stopped, at the counter's starting value 0 (bound to no object: obj_handle is not read).
    auto& h = rec->handles.emplace_back(std::make_unique<t::PvarHandleRec>());
    h->index = pvar_index;
    *handle = reinterpret_cast<MPI_T_pvar_handle>(h.get());
    *count = 1;
    return MPI_SUCCESS;
  });
}
GRIDMPI_WEAK(T_pvar_handle_alloc)

extern "C" int PMPI_T_pvar_handle_free(MPI_T_pvar_session session, MPI_T_pvar_handle* handle) {
  return t::t_call([&](MpitState& s) {
    t::PvarSessionRec* rec = t::find_session(s, session);
    if (rec == nullptr) return MPI_T_ERR_INVALID_SESSION;
    if (handle == nullptr) return MPI_T_ERR_INVALID;
    t::PvarHandleRec* h = t::find_handle(*rec, *handle);
    if (h == nullptr) return MPI_T_ERR_INVALID_HANDLE;
    std::erase_if(rec->handles, [&](const auto& owned) { return owned.get() == h; });
    *handle = MPI_T_PVAR_HANDLE_NULL;
    return MPI_SUCCESS;
  });
}
GRIDMPI_WEAK(T_pvar_handle_free)

extern "C" int PMPI_T_pvar_start(MPI_T_pvar_session session, MPI_T_pvar_handle handle) {
  return t::each_handle(session, handle, t::start_handle);
}
GRIDMPI_WEAK(T_pvar_start)

extern "C" int PMPI_T_pvar_stop(MPI_T_pvar_session session, MPI_T_pvar_handle handle) {
  return t::each_handle(session, handle, t::stop_handle);
}
GRIDMPI_WEAK(T_pvar_stop)

extern "C" int PMPI_T_pvar_read(MPI_T_pvar_session session, MPI_T_pvar_handle handle, void* buf) {
  return t::one_handle(session, handle, [&](const t::PvarEntry& p, const t::PvarHandleRec& h) {
    if (buf == nullptr) return MPI_T_ERR_INVALID;
    t::PvarValue v = t::handle_value(p, h);
    if (p.kind == t::pvars::Kind::counter)
      std::memcpy(buf, &v.count, sizeof v.count);
    else
      std::memcpy(buf, &v.seconds, sizeof v.seconds);
    return MPI_SUCCESS;
  });
}
GRIDMPI_WEAK(T_pvar_read)

extern "C" int PMPI_T_pvar_write(MPI_T_pvar_session session, MPI_T_pvar_handle handle, const void*) {
  return t::one_handle(session, handle,
                       [](const t::PvarEntry&, const t::PvarHandleRec&) { return MPI_T_ERR_PVAR_NO_WRITE; });
}
GRIDMPI_WEAK(T_pvar_write)

extern "C" int PMPI_T_pvar_reset(MPI_T_pvar_session session, MPI_T_pvar_handle handle) {
  return t::each_handle(session, handle, t::reset_handle);
}
GRIDMPI_WEAK(T_pvar_reset)

extern "C" int PMPI_T_pvar_readreset(MPI_T_pvar_session session, MPI_T_pvar_handle handle, void*) {
  return t::one_handle(session, handle,
                       [](const t::PvarEntry&, const t::PvarHandleRec&) { return MPI_T_ERR_PVAR_NO_ATOMIC; });
}
GRIDMPI_WEAK(T_pvar_readreset)

// ---------------------------------------------------------------- categories

extern "C" int PMPI_T_category_get_num(int* num_cat) {
  return t::t_call([&](MpitState& s) {
    if (num_cat == nullptr) return MPI_T_ERR_INVALID;
    *num_cat = static_cast<int>(s.categories.size());
    return MPI_SUCCESS;
  });
}
GRIDMPI_WEAK(T_category_get_num)

extern "C" int PMPI_T_category_get_info(int cat_index, char* name, int* name_len, char* desc, int* desc_len,
                                        int* num_cvars, int* num_pvars, int* num_categories) {
  return t::t_call([&](MpitState& s) {
    if (!t::valid_category(s, cat_index)) return MPI_T_ERR_INVALID_INDEX;
    const t::Category& k = s.categories[cat_index];
    t::put_string(k.name, name, name_len);
    t::put_string(k.description, desc, desc_len);
    if (num_cvars) *num_cvars = static_cast<int>(k.cvars.size());
    if (num_pvars) *num_pvars = static_cast<int>(k.pvars.size());
    if (num_categories) *num_categories = 0;
    return MPI_SUCCESS;
  });
}
GRIDMPI_WEAK(T_category_get_info)

extern "C" int PMPI_T_category_get_index(const char* name, int* cat_index) {
  return t::t_call([&](MpitState& s) {
    if (name == nullptr || cat_index == nullptr) return MPI_T_ERR_INVALID;
    for (std::size_t i = 0; i < s.categories.size(); ++i) {
      if (s.categories[i].name == name) {
        *cat_index = static_cast<int>(i);
        return MPI_SUCCESS;
      }
    }
    return MPI_T_ERR_INVALID_NAME;
  });
}
GRIDMPI_WEAK(T_category_get_index)

extern "C" int PMPI_T_category_get_cvars(int cat_index, int len, int indices[]) {
  return t::t_call([&](MpitState& s) {
    if (!t::valid_category(s, cat_index)) return MPI_T_ERR_INVALID_INDEX;
    if (len < 0 || (len > 0 && indices == nullptr)) return MPI_T_ERR_INVALID;
    const auto& cvars = s.categories[cat_index].cvars;
    std::size_t n = std::min(cvars.size(), static_cast<std::size_t>(len));
    std::copy_n(cvars.begin(), n, indices);
    return MPI_SUCCESS;
  });
}
GRIDMPI_WEAK(T_category_get_cvars)

extern "C" int PMPI_T_category_get_pvars(int cat_index, int len, int indices[]) {
  return t::t_call([&](MpitState& s) {
    if (!t::valid_category(s, cat_index)) return MPI_T_ERR_INVALID_INDEX;
    if (len < 0 || (len > 0 && indices == nullptr)) return MPI_T_ERR_INVALID;
    const auto& pvars = s.categories[cat_index].pvars;
    std::size_t n = std::min(pvars.size(), static_cast<std::size_t>(len));
    std::copy_n(pvars.begin(), n, indices);
    return MPI_SUCCESS;
  });
}
GRIDMPI_WEAK(T_category_get_pvars)

extern "C" int PMPI_T_category_get_categories(int cat_index, int len, int indices[]) {
  return t::t_call([&](MpitState& s) {
    if (!t::valid_category(s, cat_index)) return MPI_T_ERR_INVALID_INDEX;
    if (len < 0 || (len > 0 && indices == nullptr)) return MPI_T_ERR_INVALID;
    return MPI_SUCCESS;  // categories are flat
  });
}
GRIDMPI_WEAK(T_category_get_categories)

extern "C" int PMPI_T_category_changed(int* stamp) {
  return t::t_call([&](MpitState& s) {
    if (stamp == nullptr) return MPI_T_ERR_INVALID;
    *stamp = s.stamp;
    return MPI_SUCCESS;
  });
}
GRIDMPI_WEAK(T_category_changed)
