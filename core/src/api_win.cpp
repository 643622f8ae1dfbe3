// C API: one-sided communication (MPI-3.1 chapter 11): windows, RMA
// operations, synchronisation, window attributes, names and error handlers.
// Owner: core/win*.cpp.  Errors of calls on a window go to the window's error
// handler (win_call); window creation reports to the communicator's.
#include <atomic>
#include <cstring>
#include <map>
#include <string>
#include <memory>
#include <new>

#include <fmt/format.h>

#include "core/api.hpp"
#include "core/attr.hpp"
#include "core/errhandler.hpp"
#include "core/group.hpp"
#include "core/info.hpp"
#include "core/runtime.hpp"
#include "core/win.hpp"

using namespace gridmpi;
using namespace gridmpi::core;

namespace {

template <class Body>
int win_call(MPI_Win win, const char* function, Body&& body) noexcept {
  return guarded_call([&](int error_class, const char* message) {
    return handle_win_error(win, error_class, function, message);
  }, [&] {
    require_initialized(function);
    body();
  });
}


void check_info(MPI_Info handle) {
  if (handle != MPI_INFO_NULL) info(handle);
}

// The window hints of MPI-3.1 11.2.1 and 11.2.3 (alloc_shared_noncontig for
// shared windows only); other keys are ignored.
void remember_hints(Window& w, MPI_Info handle) {
  if (handle == MPI_INFO_NULL) return;
  static const char* const keys[] = {"no_locks", "accumulate_ordering", "accumulate_ops", "same_size",
                                     "same_disp_unit", "alloc_shared_noncontig"};
  const Info& given = info(handle);
  for (const char* key : keys) {
    if (std::strcmp(key, "alloc_shared_noncontig") == 0 && w.flavor != MPI_WIN_FLAVOR_SHARED) continue;
    if (auto value = given.get(key)) w.hints[key] = *value;
  }
}

MPI_Request issue_request(Window& w, std::shared_ptr<PendingOp> op, MPI_Request* request) {
  require_out(request, "request");
  return *request = rma_request(w, std::move(op));
}

}  // namespace

// ---- creation and destruction ----

extern "C" int PMPI_Win_create(void* base, MPI_Aint size, int disp_unit, MPI_Info info_handle, MPI_Comm comm_handle,
                               MPI_Win* win) {
  return api_call(comm_handle, "MPI_Win_create", [&] {
    require_initialized("MPI_Win_create");
    require_out(win, "win");
    check_info(info_handle);
    *win = win_create(base, size, disp_unit, comm(comm_handle));
    remember_hints(window(*win), info_handle);
  });
}
GRIDMPI_WEAK(Win_create)

extern "C" int PMPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info_handle, MPI_Comm comm_handle,
                                 void* baseptr, MPI_Win* win) {
  return api_call(comm_handle, "MPI_Win_allocate", [&] {
    require_initialized("MPI_Win_allocate");
    require_out(win, "win");
    check_info(info_handle);
    *win = win_allocate(size, disp_unit, comm(comm_handle), baseptr);
    remember_hints(window(*win), info_handle);
  });
}
GRIDMPI_WEAK(Win_allocate)

extern "C" int PMPI_Win_create_dynamic(MPI_Info info_handle, MPI_Comm comm_handle, MPI_Win* win) {
  return api_call(comm_handle, "MPI_Win_create_dynamic", [&] {
    require_initialized("MPI_Win_create_dynamic");
    require_out(win, "win");
    check_info(info_handle);
    *win = win_create_dynamic(comm(comm_handle));
    remember_hints(window(*win), info_handle);
  });
}
GRIDMPI_WEAK(Win_create_dynamic)

extern "C" int PMPI_Win_allocate_shared(MPI_Aint size, int disp_unit, MPI_Info info_handle, MPI_Comm comm_handle,
                                        void* baseptr, MPI_Win* win) {
  return api_call(comm_handle, "MPI_Win_allocate_shared", [&] {
    require_initialized("MPI_Win_allocate_shared");
    require_out(win, "win");
    check_info(info_handle);  // alloc_shared_noncontig may be given; the memory is contiguous anyway
    *win = win_allocate_shared(size, disp_unit, comm(comm_handle), baseptr);
    remember_hints(window(*win), info_handle);
  });
}
GRIDMPI_WEAK(Win_allocate_shared)

extern "C" int PMPI_Win_shared_query(MPI_Win win, int rank, MPI_Aint* size, int* disp_unit, void* baseptr) {
  return win_call(win, "MPI_Win_shared_query", [&] {
    require_out(size, "size");
    require_out(disp_unit, "disp_unit");
    require_out(baseptr, "baseptr");
    win_shared_query(window(win), rank, size, disp_unit, baseptr);
  });
}
GRIDMPI_WEAK(Win_shared_query)

extern "C" int PMPI_Win_attach(MPI_Win win, void* base, MPI_Aint size) {
  return win_call(win, "MPI_Win_attach", [&] { win_attach(window(win), base, size); });
}
GRIDMPI_WEAK(Win_attach)

extern "C" int PMPI_Win_detach(MPI_Win win, const void* base) {
  return win_call(win, "MPI_Win_detach", [&] { win_detach(window(win), base); });
}
GRIDMPI_WEAK(Win_detach)

extern "C" int PMPI_Win_free(MPI_Win* win) {
  MPI_Win handle = win ? *win : MPI_WIN_NULL;
  return win_call(handle, "MPI_Win_free", [&] {
    require_out(win, "win");
    win_free(handle);
    *win = MPI_WIN_NULL;
  });
}
GRIDMPI_WEAK(Win_free)

extern "C" int PMPI_Win_get_group(MPI_Win win, MPI_Group* group_out) {
  return win_call(win, "MPI_Win_get_group", [&] {
    require_out(group_out, "group");
    *group_out = win_get_group(window(win));
  });
}
GRIDMPI_WEAK(Win_get_group)

extern "C" int PMPI_Win_set_name(MPI_Win win, const char* win_name) {
  return win_call(win, "MPI_Win_set_name", [&] {
    require_out(win_name, "win_name");
    // Longer names are truncated (the standard's rule), keeping room for the null.
    window(win).name.assign(win_name, strnlen(win_name, MPI_MAX_OBJECT_NAME - 1));
  });
}
GRIDMPI_WEAK(Win_set_name)

extern "C" int PMPI_Win_get_name(MPI_Win win, char* win_name, int* resultlen) {
  return win_call(win, "MPI_Win_get_name", [&] {
    require_out(win_name, "win_name");
    require_out(resultlen, "resultlen");
    const std::string& name = window(win).name;
    std::memcpy(win_name, name.c_str(), name.size() + 1);
    *resultlen = static_cast<int>(name.size());
  });
}
GRIDMPI_WEAK(Win_get_name)

// Window hints are remembered and reported (with the defaults), never acted on.
extern "C" int PMPI_Win_set_info(MPI_Win win, MPI_Info info_handle) {
  return win_call(win, "MPI_Win_set_info", [&] {
    Window& w = window(win);
    check_info(info_handle);
    remember_hints(w, info_handle);
  });
}
GRIDMPI_WEAK(Win_set_info)

extern "C" int PMPI_Win_get_info(MPI_Win win, MPI_Info* info_used) {
  return win_call(win, "MPI_Win_get_info", [&] {
    window(win);
    require_out(info_used, "info_used");
    auto fresh = std::make_unique<Info>();
    const Window& w = window(win);
    std::map<std::string, std::string> hints = w.hints;
    hints.emplace("no_locks", "false");
    hints.emplace("accumulate_ordering", "rar,raw,war,waw");
    hints.emplace("accumulate_ops", "same_op_no_op");
    hints.emplace("same_size", "false");
    hints.emplace("same_disp_unit", "false");
    if (w.flavor == MPI_WIN_FLAVOR_SHARED) hints.emplace("alloc_shared_noncontig", "false");
    for (const auto& [key, value] : hints) fresh->set(key, value);
    Info* raw = fresh.get();
    raw->handle = info_table().add(std::move(fresh));
    *info_used = raw->handle;
  });
}
GRIDMPI_WEAK(Win_get_info)

// ---- synchronisation ----

extern "C" int PMPI_Win_fence(int assert_flags, MPI_Win win) {
  return win_call(win, "MPI_Win_fence", [&] { win_fence(window(win), assert_flags); });
}
GRIDMPI_WEAK(Win_fence)

extern "C" int PMPI_Win_post(MPI_Group group_handle, int assert_flags, MPI_Win win) {
  return win_call(win, "MPI_Win_post", [&] { win_post(window(win), group_handle, assert_flags); });
}
GRIDMPI_WEAK(Win_post)

extern "C" int PMPI_Win_start(MPI_Group group_handle, int assert_flags, MPI_Win win) {
  return win_call(win, "MPI_Win_start", [&] { win_start(window(win), group_handle, assert_flags); });
}
GRIDMPI_WEAK(Win_start)

extern "C" int PMPI_Win_complete(MPI_Win win) {
  return win_call(win, "MPI_Win_complete", [&] { win_complete(window(win)); });
}
GRIDMPI_WEAK(Win_complete)

extern "C" int PMPI_Win_wait(MPI_Win win) {
  return win_call(win, "MPI_Win_wait", [&] { win_wait(window(win)); });
}
GRIDMPI_WEAK(Win_wait)

extern "C" int PMPI_Win_test(MPI_Win win, int* flag) {
  return win_call(win, "MPI_Win_test", [&] {
    require_out(flag, "flag");
    *flag = win_test(window(win)) ? 1 : 0;
  });
}
GRIDMPI_WEAK(Win_test)

extern "C" int PMPI_Win_lock(int lock_type, int rank, int assert_flags, MPI_Win win) {
  return win_call(win, "MPI_Win_lock", [&] { win_lock(window(win), lock_type, rank, assert_flags); });
}
GRIDMPI_WEAK(Win_lock)

extern "C" int PMPI_Win_unlock(int rank, MPI_Win win) {
  return win_call(win, "MPI_Win_unlock", [&] { win_unlock(window(win), rank); });
}
GRIDMPI_WEAK(Win_unlock)

extern "C" int PMPI_Win_lock_all(int assert_flags, MPI_Win win) {
  return win_call(win, "MPI_Win_lock_all", [&] { win_lock_all(window(win), assert_flags); });
}
GRIDMPI_WEAK(Win_lock_all)

extern "C" int PMPI_Win_unlock_all(MPI_Win win) {
  return win_call(win, "MPI_Win_unlock_all", [&] { win_unlock_all(window(win)); });
}
GRIDMPI_WEAK(Win_unlock_all)

// Local completion is implemented as remote completion (stronger, allowed).
extern "C" int PMPI_Win_flush(int rank, MPI_Win win) {
  return win_call(win, "MPI_Win_flush", [&] { win_flush(window(win), rank); });
}
GRIDMPI_WEAK(Win_flush)

extern "C" int PMPI_Win_flush_local(int rank, MPI_Win win) {
  return win_call(win, "MPI_Win_flush_local", [&] { win_flush_local(window(win), rank); });
}
GRIDMPI_WEAK(Win_flush_local)

extern "C" int PMPI_Win_flush_all(MPI_Win win) {
  return win_call(win, "MPI_Win_flush_all", [&] { win_flush_all(window(win)); });
}
GRIDMPI_WEAK(Win_flush_all)

extern "C" int PMPI_Win_flush_local_all(MPI_Win win) {
  return win_call(win, "MPI_Win_flush_local_all", [&] { win_flush_local_all(window(win)); });
}
GRIDMPI_WEAK(Win_flush_local_all)

// The separate memory model: public and private copies are the same memory
// here, so a memory barrier is all that is needed.
extern "C" int PMPI_Win_sync(MPI_Win win) {
  return win_call(win, "MPI_Win_sync", [&] {
    window(win);
    std::atomic_thread_fence(std::memory_order_seq_cst);
  });
}
GRIDMPI_WEAK(Win_sync)

// ---- communication ----

namespace {

RmaCall transfer(const void* origin, int origin_count, MPI_Datatype origin_type, int target, MPI_Aint disp,
                 int target_count, MPI_Datatype target_type) {
  RmaCall c;
  c.origin = origin;
  c.origin_count = origin_count;
  c.origin_type = origin_type;
  c.target = target;
  c.target_disp = disp;
  c.target_count = target_count;
  c.target_type = target_type;
  return c;
}

RmaCall get_call(void* origin, int origin_count, MPI_Datatype origin_type, int target, MPI_Aint disp,
                 int target_count, MPI_Datatype target_type) {
  RmaCall c = transfer(nullptr, 0, MPI_DATATYPE_NULL, target, disp, target_count, target_type);
  c.result = origin;
  c.result_count = origin_count;
  c.result_type = origin_type;
  return c;
}

}  // namespace

extern "C" int PMPI_Put(const void* origin, int origin_count, MPI_Datatype origin_type, int target, MPI_Aint disp,
                        int target_count, MPI_Datatype target_type, MPI_Win win) {
  return win_call(win, "MPI_Put", [&] {
    rma_put(window(win), transfer(origin, origin_count, origin_type, target, disp, target_count, target_type));
  });
}
GRIDMPI_WEAK(Put)

extern "C" int PMPI_Get(void* origin, int origin_count, MPI_Datatype origin_type, int target, MPI_Aint disp,
                        int target_count, MPI_Datatype target_type, MPI_Win win) {
  return win_call(win, "MPI_Get", [&] {
    rma_get(window(win), get_call(origin, origin_count, origin_type, target, disp, target_count, target_type));
  });
}
GRIDMPI_WEAK(Get)

extern "C" int PMPI_Accumulate(const void* origin, int origin_count, MPI_Datatype origin_type, int target,
                               MPI_Aint disp, int target_count, MPI_Datatype target_type, MPI_Op op, MPI_Win win) {
  return win_call(win, "MPI_Accumulate", [&] {
    RmaCall c = transfer(origin, origin_count, origin_type, target, disp, target_count, target_type);
    c.op = op;
    rma_accumulate(window(win), c);
  });
}
GRIDMPI_WEAK(Accumulate)

extern "C" int PMPI_Get_accumulate(const void* origin, int origin_count, MPI_Datatype origin_type, void* result,
                                   int result_count, MPI_Datatype result_type, int target, MPI_Aint disp,
                                   int target_count, MPI_Datatype target_type, MPI_Op op, MPI_Win win) {
  return win_call(win, "MPI_Get_accumulate", [&] {
    RmaCall c = transfer(origin, origin_count, origin_type, target, disp, target_count, target_type);
    c.result = result;
    c.result_count = result_count;
    c.result_type = result_type;
    c.op = op;
    rma_get_accumulate(window(win), c);
  });
}
GRIDMPI_WEAK(Get_accumulate)

extern "C" int PMPI_Fetch_and_op(const void* origin, void* result, MPI_Datatype type, int target, MPI_Aint disp,
                                 MPI_Op op, MPI_Win win) {
  return win_call(win, "MPI_Fetch_and_op", [&] {
    RmaCall c = transfer(origin, 1, type, target, disp, 1, type);
    c.result = result;
    c.result_count = 1;
    c.result_type = type;
    c.op = op;
    rma_get_accumulate(window(win), c);
  });
}
GRIDMPI_WEAK(Fetch_and_op)

extern "C" int PMPI_Compare_and_swap(const void* origin, const void* compare, void* result, MPI_Datatype type,
                                     int target, MPI_Aint disp, MPI_Win win) {
  return win_call(win, "MPI_Compare_and_swap", [&] {
    RmaCall c = transfer(origin, 1, type, target, disp, 1, type);
    c.compare = compare;
    c.result = result;
    c.result_count = 1;
    c.result_type = type;
    rma_compare_and_swap(window(win), c);
  });
}
GRIDMPI_WEAK(Compare_and_swap)

extern "C" int PMPI_Rput(const void* origin, int origin_count, MPI_Datatype origin_type, int target, MPI_Aint disp,
                         int target_count, MPI_Datatype target_type, MPI_Win win, MPI_Request* request) {
  return win_call(win, "MPI_Rput", [&] {
    require_out(request, "request");
    RmaCall c = transfer(origin, origin_count, origin_type, target, disp, target_count, target_type);
    c.request_based = true;
    Window& w = window(win);
    issue_request(w, rma_put(w, c), request);
  });
}
GRIDMPI_WEAK(Rput)

extern "C" int PMPI_Rget(void* origin, int origin_count, MPI_Datatype origin_type, int target, MPI_Aint disp,
                         int target_count, MPI_Datatype target_type, MPI_Win win, MPI_Request* request) {
  return win_call(win, "MPI_Rget", [&] {
    require_out(request, "request");
    RmaCall c = get_call(origin, origin_count, origin_type, target, disp, target_count, target_type);
    c.request_based = true;
    Window& w = window(win);
    issue_request(w, rma_get(w, c), request);
  });
}
GRIDMPI_WEAK(Rget)

extern "C" int PMPI_Raccumulate(const void* origin, int origin_count, MPI_Datatype origin_type, int target,
                                MPI_Aint disp, int target_count, MPI_Datatype target_type, MPI_Op op, MPI_Win win,
                                MPI_Request* request) {
  return win_call(win, "MPI_Raccumulate", [&] {
    require_out(request, "request");
    RmaCall c = transfer(origin, origin_count, origin_type, target, disp, target_count, target_type);
    c.op = op;
    c.request_based = true;
    Window& w = window(win);
    issue_request(w, rma_accumulate(w, c), request);
  });
}
GRIDMPI_WEAK(Raccumulate)

extern "C" int PMPI_Rget_accumulate(const void* origin, int origin_count, MPI_Datatype origin_type, void* result,
                                    int result_count, MPI_Datatype result_type, int target, MPI_Aint disp,
                                    int target_count, MPI_Datatype target_type, MPI_Op op, MPI_Win win,
                                    MPI_Request* request) {
  return win_call(win, "MPI_Rget_accumulate", [&] {
    require_out(request, "request");
    RmaCall c = transfer(origin, origin_count, origin_type, target, disp, target_count, target_type);
    c.result = result;
    c.result_count = result_count;
    c.result_type = result_type;
    c.op = op;
    c.request_based = true;
    Window& w = window(win);
    issue_request(w, rma_get_accumulate(w, c), request);
  });
}
GRIDMPI_WEAK(Rget_accumulate)

// ---- attributes ----

extern "C" int PMPI_Win_create_keyval(MPI_Win_copy_attr_function* copy, MPI_Win_delete_attr_function* del,
                                      int* keyval, void* extra_state) {
  return api_call(MPI_COMM_WORLD, "MPI_Win_create_keyval", [&] {
    require_initialized("MPI_Win_create_keyval");
    require_out(keyval, "win_keyval");
    *keyval = create_win_keyval(copy, del, extra_state);
  });
}
GRIDMPI_WEAK(Win_create_keyval)

extern "C" int PMPI_Win_free_keyval(int* keyval) {
  return api_call(MPI_COMM_WORLD, "MPI_Win_free_keyval", [&] {
    require_initialized("MPI_Win_free_keyval");
    free_keyval(keyval, KeyvalKind::win);
  });
}
GRIDMPI_WEAK(Win_free_keyval)

extern "C" int PMPI_Win_set_attr(MPI_Win win, int keyval, void* value) {
  return win_call(win, "MPI_Win_set_attr", [&] {
    window(win);
    set_win_attr(win, keyval, value);
  });
}
GRIDMPI_WEAK(Win_set_attr)

extern "C" int PMPI_Win_get_attr(MPI_Win win, int keyval, void* attribute_val, int* flag) {
  return win_call(win, "MPI_Win_get_attr", [&] {
    Window& w = window(win);
    require_out(attribute_val, "attribute_val");
    require_out(flag, "flag");
    // attribute_val is really a void**; predefined attributes other than
    // MPI_WIN_BASE (the base itself) are pointers to the values.
    void* value = nullptr;
    *flag = 1;
    switch (keyval) {
      case MPI_WIN_BASE: value = w.base; break;
      case MPI_WIN_SIZE: value = &w.bytes; break;
      case MPI_WIN_DISP_UNIT: value = &w.disp_unit; break;
      case MPI_WIN_CREATE_FLAVOR: value = &w.flavor; break;
      case MPI_WIN_MODEL: value = &w.model; break;
      default: *flag = get_win_attr(win, keyval, &value) ? 1 : 0;
    }
    if (*flag) *static_cast<void**>(attribute_val) = value;
  });
}
GRIDMPI_WEAK(Win_get_attr)

extern "C" int PMPI_Win_delete_attr(MPI_Win win, int keyval) {
  return win_call(win, "MPI_Win_delete_attr", [&] {
    window(win);
    delete_win_attr(win, keyval);
  });
}
GRIDMPI_WEAK(Win_delete_attr)

// ---- error handlers ----

extern "C" int PMPI_Win_create_errhandler(MPI_Win_errhandler_function* fn, MPI_Errhandler* errhandler_out) {
  return api_call(MPI_COMM_WORLD, "MPI_Win_create_errhandler", [&] {
    require_initialized("MPI_Win_create_errhandler");
    require_out(errhandler_out, "errhandler");
    require(fn != nullptr, MPI_ERR_ARG, "the error handler function is a null pointer");
    auto e = std::make_unique<Errhandler>();
    // Same C signature as a communicator handler, with an MPI_Win.
    e->function = reinterpret_cast<MPI_Comm_errhandler_function*>(fn);
    Errhandler* raw = e.get();
    raw->handle = errhandler_table().add(std::move(e));
    *errhandler_out = raw->handle;
  });
}
GRIDMPI_WEAK(Win_create_errhandler)

extern "C" int PMPI_Win_set_errhandler(MPI_Win win, MPI_Errhandler handle) {
  return win_call(win, "MPI_Win_set_errhandler", [&] {
    replace_errhandler(window(win).errhandler, handle);
  });
}
GRIDMPI_WEAK(Win_set_errhandler)

extern "C" int PMPI_Win_get_errhandler(MPI_Win win, MPI_Errhandler* handle) {
  return win_call(win, "MPI_Win_get_errhandler", [&] {
    require_out(handle, "errhandler");
    Window& w = window(win);
    retain_errhandler(w.errhandler);  // the caller frees it with MPI_Errhandler_free
    *handle = w.errhandler;
  });
}
GRIDMPI_WEAK(Win_get_errhandler)

extern "C" int PMPI_Win_call_errhandler(MPI_Win win, int errorcode) {
  MPI_Win target = win;
  int rc = win_call(win, "MPI_Win_call_errhandler", [&] {
    window(win);
    error_class_of(errorcode);  // validates the code
  });
  if (rc != MPI_SUCCESS) return rc;
  handle_win_error(target, errorcode, "MPI_Win_call_errhandler", "called by the application");
  return MPI_SUCCESS;
}
GRIDMPI_WEAK(Win_call_errhandler)
