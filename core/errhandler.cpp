// Error handlers, error classes and strings, and the fatal / abort exits.
#include "core/errhandler.hpp"

#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "conf/log.hpp"
#include "core/api.hpp"
#include "core/attr.hpp"
#include "core/group.hpp"
#include "core/runtime.hpp"
#include "boot/control_client.hpp"

namespace gridmpi::core {

namespace {

struct ClassText {
  const char* name;
  const char* text;
};

// Index = error class (58..73: the MPI_T return codes; 74..77: MPI-4.0's); MPI_ERR_LASTCODE closes the range.
constexpr std::array<ClassText, MPI_ERR_LASTCODE + 1> builtin_classes = {{
    {"MPI_SUCCESS", "no error"},
    {"MPI_ERR_BUFFER", "invalid buffer pointer"},
    {"MPI_ERR_COUNT", "invalid count argument"},
    {"MPI_ERR_TYPE", "invalid datatype"},
    {"MPI_ERR_TAG", "invalid tag argument"},
    {"MPI_ERR_COMM", "invalid communicator"},
    {"MPI_ERR_RANK", "invalid rank"},
    {"MPI_ERR_REQUEST", "invalid request (handle)"},
    {"MPI_ERR_ROOT", "invalid root"},
    {"MPI_ERR_GROUP", "invalid group"},
    {"MPI_ERR_OP", "invalid reduction operation"},
    {"MPI_ERR_TOPOLOGY", "invalid topology"},
    {"MPI_ERR_DIMS", "invalid dimension argument"},
    {"MPI_ERR_ARG", "invalid argument of some other kind"},
    {"MPI_ERR_UNKNOWN", "unknown error"},
    {"MPI_ERR_TRUNCATE", "message truncated on receive"},
    {"MPI_ERR_OTHER", "known error not in this list"},
    {"MPI_ERR_INTERN", "internal mpi (implementation) error"},
    {"MPI_ERR_IN_STATUS", "error code is in status"},
    {"MPI_ERR_PENDING", "pending request"},
    {"MPI_ERR_ACCESS", "permission denied"},
    {"MPI_ERR_AMODE", "error related to the amode passed to MPI_File_open"},
    {"MPI_ERR_ASSERT", "invalid assert argument"},
    {"MPI_ERR_BAD_FILE", "invalid file name"},
    {"MPI_ERR_BASE", "invalid base argument"},
    {"MPI_ERR_CONVERSION", "error in a user-supplied data conversion function"},
    {"MPI_ERR_DISP", "invalid displacement argument"},
    {"MPI_ERR_DUP_DATAREP", "conversion functions could not be registered: data representation already defined"},
    {"MPI_ERR_FILE_EXISTS", "file exists"},
    {"MPI_ERR_FILE_IN_USE", "file operation could not be completed: the file is in use"},
    {"MPI_ERR_FILE", "invalid file handle"},
    {"MPI_ERR_INFO_KEY", "info key longer than MPI_MAX_INFO_KEY"},
    {"MPI_ERR_INFO_NOKEY", "info key not defined"},
    {"MPI_ERR_INFO_VALUE", "info value longer than MPI_MAX_INFO_VAL"},
    {"MPI_ERR_INFO", "invalid info argument"},
    {"MPI_ERR_IO", "other i/o error"},
    {"MPI_ERR_KEYVAL", "invalid attribute keyval"},
    {"MPI_ERR_LOCKTYPE", "invalid locktype argument"},
    {"MPI_ERR_NAME", "invalid service name"},
    {"MPI_ERR_NO_MEM", "out of memory (MPI_Alloc_mem)"},
    {"MPI_ERR_NOT_SAME", "collective argument not identical on all processes"},
    {"MPI_ERR_NO_SPACE", "not enough space"},
    {"MPI_ERR_NO_SUCH_FILE", "file does not exist"},
    {"MPI_ERR_PORT", "invalid port name"},
    {"MPI_ERR_QUOTA", "quota exceeded"},
    {"MPI_ERR_READ_ONLY", "read-only file or file system"},
    {"MPI_ERR_RMA_CONFLICT", "conflicting accesses to a window"},
    {"MPI_ERR_RMA_SYNC", "wrong synchronization of rma calls"},
    {"MPI_ERR_SERVICE", "invalid service name passed to MPI_Unpublish_name"},
    {"MPI_ERR_SIZE", "invalid size argument"},
    {"MPI_ERR_SPAWN", "error in spawning processes"},
    {"MPI_ERR_UNSUPPORTED_DATAREP", "unsupported data representation"},
    {"MPI_ERR_UNSUPPORTED_OPERATION", "unsupported operation"},
    {"MPI_ERR_WIN", "invalid window"},
    {"MPI_ERR_RMA_RANGE", "target memory is not part of the window"},
    {"MPI_ERR_RMA_ATTACH", "memory cannot be attached"},
    {"MPI_ERR_RMA_SHARED", "memory cannot be shared"},
    {"MPI_ERR_RMA_FLAVOR", "passed window has the wrong flavor for the called function"},
    {"MPI_T_ERR_INVALID_HANDLE", "invalid tool information interface handle"},
    {"MPI_T_ERR_MEMORY", "tool information interface: out of memory"},
    {"MPI_T_ERR_NOT_INITIALIZED", "tool information interface not initialized (MPI_T_init_thread)"},
    {"MPI_T_ERR_CANNOT_INIT", "tool information interface cannot be initialized"},
    {"MPI_T_ERR_INVALID_INDEX", "invalid tool information interface index"},
    {"MPI_T_ERR_INVALID_ITEM", "invalid item index of an MPI_T enumeration"},
    {"MPI_T_ERR_OUT_OF_HANDLES", "no more tool information interface handles"},
    {"MPI_T_ERR_OUT_OF_SESSIONS", "no more performance variable sessions"},
    {"MPI_T_ERR_INVALID_SESSION", "invalid performance variable session"},
    {"MPI_T_ERR_CVAR_SET_NOT_NOW", "control variable cannot be set now"},
    {"MPI_T_ERR_CVAR_SET_NEVER", "control variable can never be set (read once at start-up)"},
    {"MPI_T_ERR_PVAR_NO_STARTSTOP", "performance variable cannot be started or stopped"},
    {"MPI_T_ERR_PVAR_NO_WRITE", "performance variable cannot be written or reset"},
    {"MPI_T_ERR_PVAR_NO_ATOMIC", "performance variable cannot be read and reset atomically"},
    {"MPI_T_ERR_INVALID_NAME", "no tool information interface variable or category of that name"},
    {"MPI_T_ERR_INVALID", "invalid use of the tool information interface"},
    {"MPI_ERR_SESSION", "invalid session"},
    {"MPI_ERR_PROC_ABORTED", "a process this operation needs has aborted"},
    {"MPI_ERR_VALUE_TOO_LARGE", "a value is too large to be returned in the argument given"},
    {"MPI_ERR_ERRHANDLER", "invalid error handler"},
    {"MPI_ERR_LASTCODE", "last built-in error code"},
}};

// Codes added by MPI_Add_error_class / MPI_Add_error_code, numbered from
// MPI_ERR_LASTCODE + 1 in one sequence (a class is also a code).
struct AddedCode {
  int error_class;
  std::string text;
};
std::vector<AddedCode>& added_codes() {
  static std::vector<AddedCode> codes;
  return codes;
}
const AddedCode* find_added(int code) {
  auto& codes = added_codes();
  if (code <= MPI_ERR_LASTCODE || code > MPI_ERR_LASTCODE + static_cast<int>(codes.size())) return nullptr;
  return &codes[code - MPI_ERR_LASTCODE - 1];
}

std::string host_name_for_messages() {
  if (state() == State::initialized) return runtime().processor_name;
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "unknown host";
  return name;
}

std::string rank_for_messages() {
  if (state() == State::initialized) return std::to_string(runtime().world_rank);
  // Before MPI_Init the rank is only known from mpirun's environment.
  if (const char* r = std::getenv("_YAMPI_MYRANK")) return r;
  return "0";
}

int clamp_exit_code(int code) noexcept {
  if (code >= 0 && code <= 255) return code;
  return 255;
}

}  // namespace

HandleTable<Errhandler>& errhandler_table() {
  static HandleTable<Errhandler>& table = [] () -> HandleTable<Errhandler>& {
    static HandleTable<Errhandler> t(MPI_ERR_ARG);
    for (MPI_Errhandler h : {MPI_ERRORS_ARE_FATAL, MPI_ERRORS_RETURN, MPI_ERRORS_ABORT}) {
      auto e = std::make_unique<Errhandler>();
      e->handle = h;
      t.put_at(h, std::move(e));
    }
    return t;
  }();
  return table;
}

Errhandler& errhandler(MPI_Errhandler handle) {
  Errhandler* e = errhandler_table().find(handle);
  if (!e) throw MpiError(MPI_ERR_ARG, fmt::format("invalid error handler {}", handle));
  return *e;
}

void retain_errhandler(MPI_Errhandler handle) {
  if (errhandler_table().is_predefined(handle)) return;
  ++errhandler(handle).refcount;
}

void release_errhandler(MPI_Errhandler handle) {
  auto& table = errhandler_table();
  if (table.is_predefined(handle)) return;
  Errhandler& e = errhandler(handle);
  if (--e.refcount == 0) table.release(handle);
}

std::string error_class_name(int error_class) {
  if (error_class >= 0 && error_class <= MPI_ERR_LASTCODE) return builtin_classes[error_class].name;
  return fmt::format("user error class {}", error_class);
}

std::string error_string(int code) {
  if (code >= 0 && code <= MPI_ERR_LASTCODE) return builtin_classes[code].text;
  if (const AddedCode* added = find_added(code)) return added->text;
  throw MpiError(MPI_ERR_ARG, fmt::format("invalid error code {}", code));
}

int error_class_of(int code) {
  if (code >= 0 && code <= MPI_ERR_LASTCODE) return code;
  if (const AddedCode* added = find_added(code)) return added->error_class;
  throw MpiError(MPI_ERR_ARG, fmt::format("invalid error code {}", code));
}

int add_error_class() {
  auto& codes = added_codes();
  int code = MPI_ERR_LASTCODE + 1 + static_cast<int>(codes.size());
  codes.push_back({code, ""});
  set_predefined_attribute(MPI_LASTUSEDCODE, code);
  return code;
}

int add_error_code(int error_class) {
  auto& codes = added_codes();
  bool valid_class = (error_class >= 0 && error_class <= MPI_ERR_LASTCODE) ||
                     (find_added(error_class) && find_added(error_class)->error_class == error_class);
  if (!valid_class) throw MpiError(MPI_ERR_ARG, fmt::format("{} is not an error class", error_class));
  int code = MPI_ERR_LASTCODE + 1 + static_cast<int>(codes.size());
  codes.push_back({error_class, ""});
  set_predefined_attribute(MPI_LASTUSEDCODE, code);
  return code;
}

void add_error_string(int code, const std::string& text) {
  if (code >= 0 && code <= MPI_ERR_LASTCODE)
    throw MpiError(MPI_ERR_ARG, fmt::format("cannot change the string of built-in error code {}", code));
  auto& codes = added_codes();
  if (!find_added(code)) throw MpiError(MPI_ERR_ARG, fmt::format("invalid error code {}", code));
  if (text.size() >= MPI_MAX_ERROR_STRING)
    throw MpiError(MPI_ERR_ARG, fmt::format("error string of {} characters is longer than MPI_MAX_ERROR_STRING - 1",
                                            text.size()));
  codes[code - MPI_ERR_LASTCODE - 1].text = text;
}

int last_used_code() noexcept {
  return MPI_ERR_LASTCODE + static_cast<int>(added_codes().size());
}

void fatal_exit(int exit_code, const std::string& text) noexcept {
  std::string line;
  try {
    line = fmt::format("gridmpi: rank {} ({}, pid {}): {}", rank_for_messages(), host_name_for_messages(),
                       getpid(), text);
  } catch (...) {
    line = "gridmpi: fatal error (and out of memory formatting it)";
  }
  // The application's buffered output should not be lost with the process.
  std::fflush(nullptr);
  // mpirun prints the first failure of the job as one line ("rank N failed
  // (host, pid): text") and stops the others, whose errors (usually lost
  // connections to the failed rank) are its consequences: printed here
  // only when mpirun cannot be told.
  bool told = false;
  if (boot::ControlClient* control = control_client()) {
    try {
      told = control->abort(clamp_exit_code(exit_code), text, true);
    } catch (...) {
      // Exiting non-zero still makes mpirun end the job.
    }
  }
  if (!told) std::fprintf(stderr, "%s\n", line.c_str());
  _exit(clamp_exit_code(exit_code));
}

void abort_job(int exit_code, const std::string& message) noexcept {
  std::fflush(nullptr);
  boot::ControlClient* control = control_client();
  if (!control) {
    std::fprintf(stderr, "gridmpi: %s\n", message.c_str());
    std::exit(exit_code);
  }
  try {
    control->abort(exit_code, message);
  } catch (...) {
  }
  _exit(exit_code);
}

void replace_errhandler(MPI_Errhandler& slot, MPI_Errhandler handle) {
  errhandler(handle);  // validates before anything changes
  retain_errhandler(handle);
  release_errhandler(slot);
  slot = handle;
}

MPI_Comm_errhandler_function* user_errhandler(MPI_Errhandler handler, int code, const char* function,
                                              const char* message) {
  if (handler == MPI_ERRORS_RETURN) {
    log().debug("{}: {} ({}), returned to the caller", function, message, error_class_name(code));
    return nullptr;
  }
  Errhandler* e = errhandler_table().find(handler);
  if (handler == MPI_ERRORS_ARE_FATAL || !e || !e->function) {
    int cls = MPI_ERR_UNKNOWN;
    try {
      cls = error_class_of(code);
    } catch (...) {
    }
    fatal_exit(cls, fmt::format("{}: {} ({})", function, message, error_class_name(cls)));
  }
  // A user handler may free itself (or the object's reference to it): the
  // caller holds the function pointer, not the object.
  return e->function;
}

void invoke_errhandler(MPI_Comm comm, int code, const char* function, const char* message) {
  MPI_Errhandler handler = MPI_ERRORS_ARE_FATAL;
  if (state() == State::initialized) {
    Comm* c = comm_table().find(comm);
    if (!c) {
      comm = MPI_COMM_WORLD;
      c = comm_table().find(comm);
    }
    if (c) handler = c->errhandler;
  }
  MPI_Comm_errhandler_function* fn = user_errhandler(handler, code, function, message);
  if (!fn) return;
  MPI_Comm comm_arg = comm;
  int code_arg = code;
  fn(&comm_arg, &code_arg);
}

int handle_error(MPI_Comm comm, int error_class, const char* function, const char* message) noexcept {
  try {
    invoke_errhandler(comm, error_class, function, message);
  } catch (const std::exception& e) {
    fatal_exit(error_class, fmt::format("{}: {} ({}); then, in its error handler: {}", function, message,
                                        error_class_name(error_class), e.what()));
  } catch (...) {
    fatal_exit(error_class, fmt::format("{}: {} ({})", function, message, error_class_name(error_class)));
  }
  return error_class;
}

}  // namespace gridmpi::core
