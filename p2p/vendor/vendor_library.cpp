// Loading the vendor MPI plug-in into a link-map namespace of its own.
#include "p2p/vendor/vendor_library.hpp"

#include <dlfcn.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <stdexcept>

#include "p2p/vendor/vendor_abi.h"

namespace gridmpi::p2p::vendor {

struct Library::State {
  void* handle = nullptr;
  const gridmpi_vendor_ops* ops = nullptr;
  std::string path;
  int rank = 0;
  int size = 1;
  int provided = 0;
  bool finalized = false;
};

namespace {

[[noreturn]] void fail(const std::string& path, const std::string& cause, const std::string& fix) {
  throw std::runtime_error("vendor MPI plug-in " + path + ": " + cause + (fix.empty() ? "" : "; " + fix));
}

std::string vendor_error(const gridmpi_vendor_ops& ops, int code) {
  char text[512] = {};
  if (ops.error_string) ops.error_string(code, text, sizeof text);
  std::string s = text;
  if (s.empty()) s = "vendor MPI error " + std::to_string(code);
  return s;
}

}  // namespace

std::unique_ptr<Library> Library::open(const std::string& plugin_path, int thread_level) {
  const std::string fix_build =
      "build gridmpi with that vendor's mpicc found (GRIDMPI_VENDOR_MPICC_<NAME>) or point "
      "GRIDMPI_VENDOR_PLUGIN at a libgridmpi-vendor-<name>.so of this gridmpi";
  struct stat st {};
  if (::stat(plugin_path.c_str(), &st) != 0)
    fail(plugin_path, std::strerror(errno), fix_build);
  if (!S_ISREG(st.st_mode)) fail(plugin_path, "not a regular file", fix_build);

  // A namespace of its own: the vendor's MPI_* symbols and ours never meet.
  // RTLD_NOW so that a plug-in built against a vendor library that is not
  // installed here fails now with the missing name, not at the first call.
  dlerror();
  void* handle = ::dlmopen(LM_ID_NEWLM, plugin_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* e = dlerror();
    fail(plugin_path, std::string("dlmopen failed: ") + (e ? e : "unknown error"),
         "check that the vendor MPI it was built with is installed (ldd on the file names what is "
         "missing); glibc allows about 16 namespaces per process");
  }
  auto close_and_fail = [&](const std::string& cause, const std::string& fix) {
    ::dlclose(handle);
    fail(plugin_path, cause, fix);
  };
  void* entry = ::dlsym(handle, GRIDMPI_VENDOR_ENTRY);
  if (!entry)
    close_and_fail("not a gridmpi vendor plug-in (no " GRIDMPI_VENDOR_ENTRY " symbol)", fix_build);
  auto entry_fn = reinterpret_cast<gridmpi_vendor_entry_fn>(entry);
  const gridmpi_vendor_ops* ops = entry_fn();
  if (!ops) close_and_fail(GRIDMPI_VENDOR_ENTRY " returned no table", fix_build);
  if (ops->abi_version != GRIDMPI_VENDOR_ABI ||
      ops->struct_size != static_cast<int>(sizeof(gridmpi_vendor_ops)))
    close_and_fail("plug-in ABI version " + std::to_string(ops->abi_version) + " (table of " +
                       std::to_string(ops->struct_size) + " bytes), this gridmpi needs version " +
                       std::to_string(GRIDMPI_VENDOR_ABI) + " (" +
                       std::to_string(sizeof(gridmpi_vendor_ops)) + " bytes)",
                   "use the plug-in built with this gridmpi (lib/gridmpi/vendor/)");

  auto state = std::make_unique<State>();
  state->handle = handle;
  state->ops = ops;
  state->path = plugin_path;
  int rc = ops->init(thread_level, &state->provided, &state->rank, &state->size);
  if (rc != 0)
    // After a failed MPI_Init the vendor is unusable and MPI forbids calling
    // it again; the handle stays open (unloading a half-initialised MPI with
    // threads of its own is not safe).
    fail(plugin_path, std::string("the vendor's MPI_Init_thread failed: ") + vendor_error(*ops, rc),
         "start the job with the vendor's own mpiexec (mpirun -vendor " + std::string(ops->name) +
             ") built for the same vendor MPI as the plug-in");
  std::unique_ptr<Library> lib(new Library());
  lib->state_ = std::move(state);
  return lib;
}

Library::~Library() {
  if (!state_) return;
  if (!state_->finalized) finalize();
  // The handle is deliberately not dlclose()d: the vendor leaves threads,
  // atexit handlers and signal handlers behind that would point into the
  // unloaded code.  The namespace lives until the process ends.
}

int Library::rank() const noexcept { return state_->rank; }
int Library::size() const noexcept { return state_->size; }
int Library::provided_thread_level() const noexcept { return state_->provided; }
const std::string& Library::path() const noexcept { return state_->path; }
const gridmpi_vendor_ops& Library::ops() const noexcept { return *state_->ops; }

std::string Library::version() const {
  char text[1024] = {};
  state_->ops->library_version(text, sizeof text);
  std::string s = text;
  if (auto nl = s.find('\n'); nl != std::string::npos) s.resize(nl);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\r' || s.back() == ',')) s.pop_back();
  return s;
}

void Library::finalize() {
  if (state_->finalized) return;
  state_->finalized = true;
  state_->ops->finalize();
}

void Library::abort(int code) {
  state_->ops->abort(code);
  std::abort();  // MPI_Abort does not return; this is for a vendor that does
}

namespace {
// The process's one vendor MPI.  A plain pointer on purpose: a process that
// exits without MPI_Finalize must not finalize the vendor from a static
// destructor (another thread may be inside the vendor); the vendor's mpiexec
// then reports the rank as failed, which is what happened.
Library* process_lib = nullptr;  // NOLINT
std::mutex process_lib_mutex;
}  // namespace

Library* process_library() noexcept { return process_lib; }

Library& open_process_library(const std::string& plugin_path, int thread_level) {
  std::lock_guard lock(process_lib_mutex);
  if (process_lib) {
    if (process_lib->path() != plugin_path)
      throw std::runtime_error("vendor MPI plug-in " + plugin_path + ": another plug-in (" +
                               process_lib->path() + ") is already open in this process");
    return *process_lib;
  }
  process_lib = Library::open(plugin_path, thread_level).release();
  return *process_lib;
}

void close_process_library() noexcept {
  std::lock_guard lock(process_lib_mutex);
  delete process_lib;  // finalizes the vendor MPI
  process_lib = nullptr;
}

}  // namespace gridmpi::p2p::vendor
