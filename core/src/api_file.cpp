// C API: MPI-IO (MPI-3.1 chapter 13).  Owner: core/file.cpp.  Errors of
// calls on a file go to the file's error handler (file_call); errors of
// MPI_File_open, MPI_File_delete, MPI_Register_datarep and of calls given an
// invalid file handle go to MPI_FILE_NULL's, MPI_ERRORS_RETURN by default.
#include <cstring>
#include <memory>
#include <new>
#include <string>

#include <fmt/format.h>

#include "core/api.hpp"
#include "core/datatype.hpp"
#include "core/errhandler.hpp"
#include "core/file.hpp"
#include "core/group.hpp"
#include "core/info.hpp"
#include "core/runtime.hpp"

using namespace gridmpi;
using namespace gridmpi::core;

namespace {

template <class Body>
int file_call(MPI_File fh, const char* function, Body&& body) noexcept {
  return guarded_call([&](int error_class, const char* message) {
    return handle_file_error(fh, error_class, function, message);
  }, [&] {
    require_initialized(function);
    body();
  });
}


// A blocking data access: runs `body` (returning an Access) and fills status.
template <class Body>
int data_call(MPI_File fh, const char* function, MPI_Status* status, Body&& body) noexcept {
  return file_call(fh, function, [&] {
    File& f = file(fh);
    Access a = body(f);
    set_file_status(status, a.bytes);
  });
}

// A non-blocking data access: performed now, the request is already complete.
template <class Body>
int request_call(MPI_File fh, const char* function, MPI_Request* request, Body&& body) noexcept {
  return file_call(fh, function, [&] {
    require_out(request, "request");
    File& f = file(fh);
    Access a = body(f);
    *request = completed_file_request(a.bytes);
  });
}

// Split collectives: the whole operation runs in _begin; _end hands over
// the status.
enum SplitKind { split_read_at_all = 1, split_write_at_all, split_read_all, split_write_all,
                 split_read_ordered, split_write_ordered };

template <class Body>
int split_begin(MPI_File fh, const char* function, SplitKind kind, Body&& body) noexcept {
  return file_call(fh, function, [&] {
    File& f = file(fh);
    if (f.split_active)
      throw MpiError(MPI_ERR_OTHER, "a split collective operation is already active on this file");
    Access a = body(f);
    f.split_active = true;
    f.split_kind = kind;
    set_file_status(&f.split_status, a.bytes);
  });
}

int split_end(MPI_File fh, const char* function, SplitKind kind, MPI_Status* status) noexcept {
  return file_call(fh, function, [&] {
    File& f = file(fh);
    if (!f.split_active || f.split_kind != kind)
      throw MpiError(MPI_ERR_OTHER, "no matching split collective operation was begun on this file");
    f.split_active = false;
    if (status) *status = f.split_status;
  });
}

MPI_Datatype copy_for_user(MPI_Datatype type) {
  if (datatype(type).predefined) return type;
  MPI_Datatype copy = type_dup(type);
  type_commit(copy);
  return copy;
}

}  // namespace

// ---- opening and closing ----

extern "C" int PMPI_File_open(MPI_Comm comm_handle, const char* filename, int amode, MPI_Info info_handle,
                              MPI_File* fh) {
  return file_call(MPI_FILE_NULL, "MPI_File_open", [&] {
    require_out(fh, "fh");
    *fh = MPI_FILE_NULL;
    *fh = file_open(comm(comm_handle), filename, amode, info_handle);
  });
}
GRIDMPI_WEAK(File_open)

extern "C" int PMPI_File_close(MPI_File* fh) {
  MPI_File target = fh ? *fh : MPI_FILE_NULL;
  return file_call(target, "MPI_File_close", [&] {
    require_out(fh, "fh");
    file(*fh);
    file_close(*fh);
    *fh = MPI_FILE_NULL;
  });
}
GRIDMPI_WEAK(File_close)

extern "C" int PMPI_File_delete(const char* filename, MPI_Info info_handle) {
  return file_call(MPI_FILE_NULL, "MPI_File_delete", [&] {
    if (info_handle != MPI_INFO_NULL) info(info_handle);
    file_delete(filename);
  });
}
GRIDMPI_WEAK(File_delete)

// ---- file attributes ----

extern "C" int PMPI_File_set_size(MPI_File fh, MPI_Offset size) {
  return file_call(fh, "MPI_File_set_size", [&] { file_set_size(file(fh), size); });
}
GRIDMPI_WEAK(File_set_size)

extern "C" int PMPI_File_preallocate(MPI_File fh, MPI_Offset size) {
  return file_call(fh, "MPI_File_preallocate", [&] { file_preallocate(file(fh), size); });
}
GRIDMPI_WEAK(File_preallocate)

extern "C" int PMPI_File_get_size(MPI_File fh, MPI_Offset* size) {
  return file_call(fh, "MPI_File_get_size", [&] {
    require_out(size, "size");
    *size = file_size(file(fh));
  });
}
GRIDMPI_WEAK(File_get_size)

extern "C" int PMPI_File_get_group(MPI_File fh, MPI_Group* group_out) {
  return file_call(fh, "MPI_File_get_group", [&] {
    require_out(group_out, "group");
    Group g = *comm(file(fh).comm).group;
    g.handle = MPI_GROUP_NULL;
    *group_out = add_group(std::move(g));
  });
}
GRIDMPI_WEAK(File_get_group)

extern "C" int PMPI_File_get_amode(MPI_File fh, int* amode) {
  return file_call(fh, "MPI_File_get_amode", [&] {
    require_out(amode, "amode");
    *amode = file(fh).amode;
  });
}
GRIDMPI_WEAK(File_get_amode)

// Hints are remembered and reported, never acted on (all I/O is POSIX).
extern "C" int PMPI_File_set_info(MPI_File fh, MPI_Info info_handle) {
  return file_call(fh, "MPI_File_set_info", [&] {
    File& f = file(fh);
    if (info_handle != MPI_INFO_NULL) info(info_handle);
    file_set_hints(f, info_handle);
  });
}
GRIDMPI_WEAK(File_set_info)

extern "C" int PMPI_File_get_info(MPI_File fh, MPI_Info* info_used) {
  return file_call(fh, "MPI_File_get_info", [&] {
    require_out(info_used, "info_used");
    const File& f = file(fh);
    auto fresh = std::make_unique<Info>();
    for (const auto& [key, value] : f.hints) fresh->set(key, value);
    if (!f.hints.count("filename")) fresh->set("filename", f.filename);
    Info* raw = fresh.get();
    raw->handle = info_table().add(std::move(fresh));
    *info_used = raw->handle;
  });
}
GRIDMPI_WEAK(File_get_info)

// ---- views ----

extern "C" int PMPI_File_set_view(MPI_File fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype,
                                  const char* datarep, MPI_Info info_handle) {
  return file_call(fh, "MPI_File_set_view", [&] {
    file_set_view(file(fh), disp, etype, filetype, datarep, info_handle);
  });
}
GRIDMPI_WEAK(File_set_view)

extern "C" int PMPI_File_get_view(MPI_File fh, MPI_Offset* disp, MPI_Datatype* etype, MPI_Datatype* filetype,
                                  char* datarep) {
  return file_call(fh, "MPI_File_get_view", [&] {
    require_out(disp, "disp");
    require_out(etype, "etype");
    require_out(filetype, "filetype");
    require_out(datarep, "datarep");
    const File& f = file(fh);
    *disp = f.disp;
    *etype = copy_for_user(f.etype);
    *filetype = copy_for_user(f.filetype);
    std::strncpy(datarep, f.datarep.c_str(), MPI_MAX_DATAREP_STRING - 1);
    datarep[std::min<std::size_t>(f.datarep.size(), MPI_MAX_DATAREP_STRING - 1)] = '\0';
  });
}
GRIDMPI_WEAK(File_get_view)

extern "C" int PMPI_File_get_type_extent(MPI_File fh, MPI_Datatype datatype, MPI_Aint* extent) {
  return file_call(fh, "MPI_File_get_type_extent", [&] {
    require_out(extent, "extent");
    *extent = file_type_extent(file(fh), datatype);
  });
}
GRIDMPI_WEAK(File_get_type_extent)

extern "C" int PMPI_Register_datarep(const char* datarep, MPI_Datarep_conversion_function* read_conversion_fn,
                                     MPI_Datarep_conversion_function* write_conversion_fn,
                                     MPI_Datarep_extent_function* dtype_file_extent_fn, void* extra_state) {
  return file_call(MPI_FILE_NULL, "MPI_Register_datarep", [&] {
    register_datarep(datarep, read_conversion_fn, write_conversion_fn, dtype_file_extent_fn, extra_state);
  });
}
GRIDMPI_WEAK(Register_datarep)

// ---- data access: explicit offsets ----

extern "C" int PMPI_File_read_at(MPI_File fh, MPI_Offset offset, void* buf, int count, MPI_Datatype datatype,
                                 MPI_Status* status) {
  return data_call(fh, "MPI_File_read_at", status,
                   [&](File& f) { return file_read_at(f, offset, buf, count, datatype); });
}
GRIDMPI_WEAK(File_read_at)

extern "C" int PMPI_File_read_at_all(MPI_File fh, MPI_Offset offset, void* buf, int count,
                                     MPI_Datatype datatype, MPI_Status* status) {
  return data_call(fh, "MPI_File_read_at_all", status, [&](File& f) {
    return file_collective(f, false, [&] { return file_read_at(f, offset, buf, count, datatype); });
  });
}
GRIDMPI_WEAK(File_read_at_all)

extern "C" int PMPI_File_write_at(MPI_File fh, MPI_Offset offset, const void* buf, int count,
                                  MPI_Datatype datatype, MPI_Status* status) {
  return data_call(fh, "MPI_File_write_at", status,
                   [&](File& f) { return file_write_at(f, offset, buf, count, datatype); });
}
GRIDMPI_WEAK(File_write_at)

extern "C" int PMPI_File_write_at_all(MPI_File fh, MPI_Offset offset, const void* buf, int count,
                                      MPI_Datatype datatype, MPI_Status* status) {
  return data_call(fh, "MPI_File_write_at_all", status, [&](File& f) {
    return file_collective(f, true, [&] { return file_write_at(f, offset, buf, count, datatype); });
  });
}
GRIDMPI_WEAK(File_write_at_all)

extern "C" int PMPI_File_iread_at(MPI_File fh, MPI_Offset offset, void* buf, int count, MPI_Datatype datatype,
                                  MPI_Request* request) {
  return request_call(fh, "MPI_File_iread_at", request,
                      [&](File& f) { return file_read_at(f, offset, buf, count, datatype); });
}
GRIDMPI_WEAK(File_iread_at)

extern "C" int PMPI_File_iwrite_at(MPI_File fh, MPI_Offset offset, const void* buf, int count,
                                   MPI_Datatype datatype, MPI_Request* request) {
  return request_call(fh, "MPI_File_iwrite_at", request,
                      [&](File& f) { return file_write_at(f, offset, buf, count, datatype); });
}
GRIDMPI_WEAK(File_iwrite_at)

// Non-blocking collectives: independent I/O at the call, no synchronisation
// (a blocking barrier here could deadlock a correct program).
extern "C" int PMPI_File_iread_at_all(MPI_File fh, MPI_Offset offset, void* buf, int count,
                                      MPI_Datatype datatype, MPI_Request* request) {
  return request_call(fh, "MPI_File_iread_at_all", request,
                      [&](File& f) { return file_read_at(f, offset, buf, count, datatype); });
}
GRIDMPI_WEAK(File_iread_at_all)

extern "C" int PMPI_File_iwrite_at_all(MPI_File fh, MPI_Offset offset, const void* buf, int count,
                                       MPI_Datatype datatype, MPI_Request* request) {
  return request_call(fh, "MPI_File_iwrite_at_all", request,
                      [&](File& f) { return file_write_at(f, offset, buf, count, datatype); });
}
GRIDMPI_WEAK(File_iwrite_at_all)

// ---- data access: individual file pointer ----

extern "C" int PMPI_File_read(MPI_File fh, void* buf, int count, MPI_Datatype datatype, MPI_Status* status) {
  return data_call(fh, "MPI_File_read", status, [&](File& f) { return file_read(f, buf, count, datatype); });
}
GRIDMPI_WEAK(File_read)

extern "C" int PMPI_File_read_all(MPI_File fh, void* buf, int count, MPI_Datatype datatype, MPI_Status* status) {
  return data_call(fh, "MPI_File_read_all", status, [&](File& f) {
    return file_collective(f, false, [&] { return file_read(f, buf, count, datatype); });
  });
}
GRIDMPI_WEAK(File_read_all)

extern "C" int PMPI_File_write(MPI_File fh, const void* buf, int count, MPI_Datatype datatype,
                               MPI_Status* status) {
  return data_call(fh, "MPI_File_write", status, [&](File& f) { return file_write(f, buf, count, datatype); });
}
GRIDMPI_WEAK(File_write)

extern "C" int PMPI_File_write_all(MPI_File fh, const void* buf, int count, MPI_Datatype datatype,
                                   MPI_Status* status) {
  return data_call(fh, "MPI_File_write_all", status, [&](File& f) {
    return file_collective(f, true, [&] { return file_write(f, buf, count, datatype); });
  });
}
GRIDMPI_WEAK(File_write_all)

extern "C" int PMPI_File_iread(MPI_File fh, void* buf, int count, MPI_Datatype datatype, MPI_Request* request) {
  return request_call(fh, "MPI_File_iread", request, [&](File& f) { return file_read(f, buf, count, datatype); });
}
GRIDMPI_WEAK(File_iread)

extern "C" int PMPI_File_iwrite(MPI_File fh, const void* buf, int count, MPI_Datatype datatype,
                                MPI_Request* request) {
  return request_call(fh, "MPI_File_iwrite", request,
                      [&](File& f) { return file_write(f, buf, count, datatype); });
}
GRIDMPI_WEAK(File_iwrite)

extern "C" int PMPI_File_iread_all(MPI_File fh, void* buf, int count, MPI_Datatype datatype,
                                   MPI_Request* request) {
  return request_call(fh, "MPI_File_iread_all", request,
                      [&](File& f) { return file_read(f, buf, count, datatype); });
}
GRIDMPI_WEAK(File_iread_all)

extern "C" int PMPI_File_iwrite_all(MPI_File fh, const void* buf, int count, MPI_Datatype datatype,
                                    MPI_Request* request) {
  return request_call(fh, "MPI_File_iwrite_all", request,
                      [&](File& f) { return file_write(f, buf, count, datatype); });
}
GRIDMPI_WEAK(File_iwrite_all)

extern "C" int PMPI_File_seek(MPI_File fh, MPI_Offset offset, int whence) {
  return file_call(fh, "MPI_File_seek", [&] { file_seek(file(fh), offset, whence); });
}
GRIDMPI_WEAK(File_seek)

extern "C" int PMPI_File_get_position(MPI_File fh, MPI_Offset* offset) {
  return file_call(fh, "MPI_File_get_position", [&] {
    require_out(offset, "offset");
    File& f = file(fh);
    if (f.amode & MPI_MODE_SEQUENTIAL)
      throw MpiError(MPI_ERR_UNSUPPORTED_OPERATION, "the file was opened MPI_MODE_SEQUENTIAL");
    *offset = f.position;
  });
}
GRIDMPI_WEAK(File_get_position)

extern "C" int PMPI_File_get_byte_offset(MPI_File fh, MPI_Offset offset, MPI_Offset* disp) {
  return file_call(fh, "MPI_File_get_byte_offset", [&] {
    require_out(disp, "disp");
    *disp = file_byte_offset(file(fh), offset);
  });
}
GRIDMPI_WEAK(File_get_byte_offset)

// ---- data access: shared file pointer ----

extern "C" int PMPI_File_read_shared(MPI_File fh, void* buf, int count, MPI_Datatype datatype,
                                     MPI_Status* status) {
  return data_call(fh, "MPI_File_read_shared", status,
                   [&](File& f) { return file_read_shared(f, buf, count, datatype); });
}
GRIDMPI_WEAK(File_read_shared)

extern "C" int PMPI_File_write_shared(MPI_File fh, const void* buf, int count, MPI_Datatype datatype,
                                      MPI_Status* status) {
  return data_call(fh, "MPI_File_write_shared", status,
                   [&](File& f) { return file_write_shared(f, buf, count, datatype); });
}
GRIDMPI_WEAK(File_write_shared)

extern "C" int PMPI_File_iread_shared(MPI_File fh, void* buf, int count, MPI_Datatype datatype,
                                      MPI_Request* request) {
  return request_call(fh, "MPI_File_iread_shared", request,
                      [&](File& f) { return file_read_shared(f, buf, count, datatype); });
}
GRIDMPI_WEAK(File_iread_shared)

extern "C" int PMPI_File_iwrite_shared(MPI_File fh, const void* buf, int count, MPI_Datatype datatype,
                                       MPI_Request* request) {
  return request_call(fh, "MPI_File_iwrite_shared", request,
                      [&](File& f) { return file_write_shared(f, buf, count, datatype); });
}
GRIDMPI_WEAK(File_iwrite_shared)

extern "C" int PMPI_File_read_ordered(MPI_File fh, void* buf, int count, MPI_Datatype datatype,
                                      MPI_Status* status) {
  return data_call(fh, "MPI_File_read_ordered", status,
                   [&](File& f) { return file_read_ordered(f, buf, count, datatype); });
}
GRIDMPI_WEAK(File_read_ordered)

extern "C" int PMPI_File_write_ordered(MPI_File fh, const void* buf, int count, MPI_Datatype datatype,
                                       MPI_Status* status) {
  return data_call(fh, "MPI_File_write_ordered", status,
                   [&](File& f) { return file_write_ordered(f, buf, count, datatype); });
}
GRIDMPI_WEAK(File_write_ordered)

extern "C" int PMPI_File_seek_shared(MPI_File fh, MPI_Offset offset, int whence) {
  return file_call(fh, "MPI_File_seek_shared", [&] { file_seek_shared(file(fh), offset, whence); });
}
GRIDMPI_WEAK(File_seek_shared)

extern "C" int PMPI_File_get_position_shared(MPI_File fh, MPI_Offset* offset) {
  return file_call(fh, "MPI_File_get_position_shared", [&] {
    require_out(offset, "offset");
    *offset = file_position_shared(file(fh));
  });
}
GRIDMPI_WEAK(File_get_position_shared)

// ---- split collectives ----

extern "C" int PMPI_File_read_at_all_begin(MPI_File fh, MPI_Offset offset, void* buf, int count,
                                           MPI_Datatype datatype) {
  return split_begin(fh, "MPI_File_read_at_all_begin", split_read_at_all, [&](File& f) {
    return file_collective(f, false, [&] { return file_read_at(f, offset, buf, count, datatype); });
  });
}
GRIDMPI_WEAK(File_read_at_all_begin)

extern "C" int PMPI_File_read_at_all_end(MPI_File fh, void*, MPI_Status* status) {
  return split_end(fh, "MPI_File_read_at_all_end", split_read_at_all, status);
}
GRIDMPI_WEAK(File_read_at_all_end)

extern "C" int PMPI_File_write_at_all_begin(MPI_File fh, MPI_Offset offset, const void* buf, int count,
                                            MPI_Datatype datatype) {
  return split_begin(fh, "MPI_File_write_at_all_begin", split_write_at_all, [&](File& f) {
    return file_collective(f, true, [&] { return file_write_at(f, offset, buf, count, datatype); });
  });
}
GRIDMPI_WEAK(File_write_at_all_begin)

extern "C" int PMPI_File_write_at_all_end(MPI_File fh, const void*, MPI_Status* status) {
  return split_end(fh, "MPI_File_write_at_all_end", split_write_at_all, status);
}
GRIDMPI_WEAK(File_write_at_all_end)

extern "C" int PMPI_File_read_all_begin(MPI_File fh, void* buf, int count, MPI_Datatype datatype) {
  return split_begin(fh, "MPI_File_read_all_begin", split_read_all, [&](File& f) {
    return file_collective(f, false, [&] { return file_read(f, buf, count, datatype); });
  });
}
GRIDMPI_WEAK(File_read_all_begin)

extern "C" int PMPI_File_read_all_end(MPI_File fh, void*, MPI_Status* status) {
  return split_end(fh, "MPI_File_read_all_end", split_read_all, status);
}
GRIDMPI_WEAK(File_read_all_end)

extern "C" int PMPI_File_write_all_begin(MPI_File fh, const void* buf, int count, MPI_Datatype datatype) {
  return split_begin(fh, "MPI_File_write_all_begin", split_write_all, [&](File& f) {
    return file_collective(f, true, [&] { return file_write(f, buf, count, datatype); });
  });
}
GRIDMPI_WEAK(File_write_all_begin)

extern "C" int PMPI_File_write_all_end(MPI_File fh, const void*, MPI_Status* status) {
  return split_end(fh, "MPI_File_write_all_end", split_write_all, status);
}
GRIDMPI_WEAK(File_write_all_end)

extern "C" int PMPI_File_read_ordered_begin(MPI_File fh, void* buf, int count, MPI_Datatype datatype) {
  return split_begin(fh, "MPI_File_read_ordered_begin", split_read_ordered,
                     [&](File& f) { return file_read_ordered(f, buf, count, datatype); });
}
GRIDMPI_WEAK(File_read_ordered_begin)

extern "C" int PMPI_File_read_ordered_end(MPI_File fh, void*, MPI_Status* status) {
  return split_end(fh, "MPI_File_read_ordered_end", split_read_ordered, status);
}
GRIDMPI_WEAK(File_read_ordered_end)

extern "C" int PMPI_File_write_ordered_begin(MPI_File fh, const void* buf, int count, MPI_Datatype datatype) {
  return split_begin(fh, "MPI_File_write_ordered_begin", split_write_ordered,
                     [&](File& f) { return file_write_ordered(f, buf, count, datatype); });
}
GRIDMPI_WEAK(File_write_ordered_begin)

extern "C" int PMPI_File_write_ordered_end(MPI_File fh, const void*, MPI_Status* status) {
  return split_end(fh, "MPI_File_write_ordered_end", split_write_ordered, status);
}
GRIDMPI_WEAK(File_write_ordered_end)

// ---- consistency ----

extern "C" int PMPI_File_set_atomicity(MPI_File fh, int flag) {
  return file_call(fh, "MPI_File_set_atomicity", [&] { file_set_atomicity(file(fh), flag != 0); });
}
GRIDMPI_WEAK(File_set_atomicity)

extern "C" int PMPI_File_get_atomicity(MPI_File fh, int* flag) {
  return file_call(fh, "MPI_File_get_atomicity", [&] {
    require_out(flag, "flag");
    *flag = file(fh).atomic ? 1 : 0;
  });
}
GRIDMPI_WEAK(File_get_atomicity)

extern "C" int PMPI_File_sync(MPI_File fh) {
  return file_call(fh, "MPI_File_sync", [&] { file_sync(file(fh)); });
}
GRIDMPI_WEAK(File_sync)

// ---- error handlers ----

extern "C" int PMPI_File_create_errhandler(MPI_File_errhandler_function* fn, MPI_Errhandler* errhandler_out) {
  return file_call(MPI_FILE_NULL, "MPI_File_create_errhandler", [&] {
    require_out(errhandler_out, "errhandler");
    require(fn != nullptr, MPI_ERR_ARG, "the error handler function is a null pointer");
    auto e = std::make_unique<Errhandler>();
    // Same C signature as a communicator handler, with an MPI_File.
    e->function = reinterpret_cast<MPI_Comm_errhandler_function*>(fn);
    Errhandler* raw = e.get();
    raw->handle = errhandler_table().add(std::move(e));
    *errhandler_out = raw->handle;
  });
}
GRIDMPI_WEAK(File_create_errhandler)

extern "C" int PMPI_File_set_errhandler(MPI_File fh, MPI_Errhandler handle) {
  return file_call(fh, "MPI_File_set_errhandler", [&] {
    replace_errhandler(fh == MPI_FILE_NULL ? file_null_errhandler() : file(fh).errhandler, handle);
  });
}
GRIDMPI_WEAK(File_set_errhandler)

extern "C" int PMPI_File_get_errhandler(MPI_File fh, MPI_Errhandler* handle) {
  return file_call(fh, "MPI_File_get_errhandler", [&] {
    require_out(handle, "errhandler");
    MPI_Errhandler current = fh == MPI_FILE_NULL ? file_null_errhandler() : file(fh).errhandler;
    retain_errhandler(current);  // the caller frees it with MPI_Errhandler_free
    *handle = current;
  });
}
GRIDMPI_WEAK(File_get_errhandler)

extern "C" int PMPI_File_call_errhandler(MPI_File fh, int errorcode) {
  int rc = file_call(fh, "MPI_File_call_errhandler", [&] {
    if (fh != MPI_FILE_NULL) file(fh);
    error_class_of(errorcode);  // validates the code
  });
  if (rc != MPI_SUCCESS) return rc;
  ApiLock lock;
  handle_file_error(fh, errorcode, "MPI_File_call_errhandler", "called by the application");
  return MPI_SUCCESS;
}
GRIDMPI_WEAK(File_call_errhandler)

// ---- handle conversion (handles are ints) ----

extern "C" MPI_Fint PMPI_File_c2f(MPI_File file) { return file; }
GRIDMPI_WEAK(File_c2f)
extern "C" MPI_File PMPI_File_f2c(MPI_Fint file) { return file; }
GRIDMPI_WEAK(File_f2c)
