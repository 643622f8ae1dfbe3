// MPI-IO (MPI-3.1 chapter 13) on POSIX files.  Owner: core/file.cpp,
// core/src/api_file.cpp.  See "MPI-IO" in core/README.md for the design.
//
// A File owns a private duplicate of its communicator (collective file
// operations never meet user messages), the POSIX descriptor of the data
// file, the descriptor of an unlinked counter file that holds the shared
// file pointer, and the view: (disp, etype, filetype) flattened once into
// the byte segments of one filetype tile.  Every access turns the user's
// (buf, count, datatype) into a packed byte stream and maps the stream
// through the view onto file pieces (pread / pwrite).
#pragma once
#include <mpi.h>

#include <cstddef>
#include <exception>
#include <map>
#include <string>
#include <vector>

#include "core/handle_table.hpp"

namespace gridmpi::core {

struct Comm;

// One run of data bytes of a filetype tile: `length` bytes at `offset` from
// the tile's start, being bytes [stream, stream + length) of the tile's
// data stream.
struct ViewSegment {
  MPI_Offset offset = 0;
  MPI_Offset length = 0;
  MPI_Offset stream = 0;
};

struct File {
  MPI_File handle = MPI_FILE_NULL;
  MPI_Comm comm = MPI_COMM_NULL;  // private duplicate of the opening communicator
  std::string filename;           // as given to MPI_File_open
  std::string path;               // filename without a "ufs:"-style prefix
  int amode = 0;
  int fd = -1;
  int shared_fd = -1;  // unlinked counter file: the shared file pointer (etypes)
  MPI_Errhandler errhandler = MPI_ERRORS_RETURN;
  bool atomic = false;
  std::map<std::string, std::string> hints;  // given to open / set_info / set_view

  // The view.  etype and filetype are held (retain_datatype) while in use.
  MPI_Offset disp = 0;
  MPI_Datatype etype = MPI_BYTE;
  MPI_Datatype filetype = MPI_BYTE;
  std::string datarep = "native";
  MPI_Offset etype_size = 1;
  MPI_Offset tile_size = 1;    // data bytes of one filetype
  MPI_Offset tile_extent = 1;  // extent of one filetype (tiles are this far apart)
  std::vector<ViewSegment> segments{ViewSegment{0, 1, 0}};  // the default view: bytes

  MPI_Offset position = 0;  // individual file pointer, in etypes of the view

  // Split collective (MPI_File_*_begin / _end): at most one at a time.
  bool split_active = false;
  int split_kind = 0;  // which begin started it (the end must match)
  MPI_Status split_status{};
};

HandleTable<File>& file_table();
File& file(MPI_File handle);  // throws MpiError(MPI_ERR_FILE)

// Collective over comm.  Throws MpiError with the same class everywhere.
MPI_File file_open(Comm& comm, const char* filename, int amode, MPI_Info info);
void file_close(MPI_File handle);  // collective; frees the handle
void file_delete(const char* filename);

// What one access moved: bytes of the program's data (the status count)
// and bytes of the file's representation (the file pointer moves by
// stream / etype size).  They differ for "external32" and registered
// representations.
struct Access {
  MPI_Offset bytes = 0;
  MPI_Offset stream = 0;
};

// Independent data access at an explicit offset (etypes of the view).
Access file_read_at(File& f, MPI_Offset offset, void* buf, int count, MPI_Datatype type);
Access file_write_at(File& f, MPI_Offset offset, const void* buf, int count, MPI_Datatype type);
// Through the individual file pointer (advanced by the etypes accessed).
Access file_read(File& f, void* buf, int count, MPI_Datatype type);
Access file_write(File& f, const void* buf, int count, MPI_Datatype type);
// Through the shared file pointer.
Access file_read_shared(File& f, void* buf, int count, MPI_Datatype type);
Access file_write_shared(File& f, const void* buf, int count, MPI_Datatype type);
// Collective, in rank order through the shared file pointer.
Access file_read_ordered(File& f, void* buf, int count, MPI_Datatype type);
Access file_write_ordered(File& f, const void* buf, int count, MPI_Datatype type);

// Collective wrapper: runs body (an independent access), then a barrier on
// the file's communicator when `barrier` (collective writes: everyone's data
// is in the file when any process returns), and rethrows body's failure
// after the barrier so that no process is left waiting.
template <class Body>
auto file_collective(File& f, bool barrier, Body&& body) -> decltype(body());

void file_barrier(File& f);

void file_set_view(File& f, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype, const char* datarep,
                   MPI_Info info);
void file_seek(File& f, MPI_Offset offset, int whence);
void file_seek_shared(File& f, MPI_Offset offset, int whence);  // collective
MPI_Offset file_position_shared(File& f);
MPI_Offset file_byte_offset(const File& f, MPI_Offset offset);
MPI_Offset file_size(const File& f);
void file_set_size(File& f, MPI_Offset size);     // collective
void file_preallocate(File& f, MPI_Offset size);  // collective
void file_set_atomicity(File& f, bool atomic);    // collective
void file_sync(File& f);                          // collective
void file_set_hints(File& f, MPI_Info info);
MPI_Aint file_type_extent(const File& f, MPI_Datatype type);

void register_datarep(const char* name, MPI_Datarep_conversion_function* read_fn,
                      MPI_Datarep_conversion_function* write_fn, MPI_Datarep_extent_function* extent_fn,
                      void* extra_state);

// The error handler of MPI_FILE_NULL: errors of MPI_File_open,
// MPI_File_delete and of calls given an invalid handle go there, and new
// files start with it.  MPI_ERRORS_RETURN unless the program changed it.
MPI_Errhandler& file_null_errhandler();
// Runs the error handler of the file (MPI_FILE_NULL's when invalid) for
// code; returns code (fatal handlers do not return).
int handle_file_error(MPI_File fh, int code, const char* function, const char* message) noexcept;

// Fills a status for bytes moved.
void set_file_status(MPI_Status* status, MPI_Offset bytes);
// A request that is already complete with this status (non-blocking I/O is
// performed at the call).
MPI_Request completed_file_request(MPI_Offset bytes);

template <class Body>
auto file_collective(File& f, bool barrier, Body&& body) -> decltype(body()) {
  std::exception_ptr failure;
  decltype(body()) result{};
  try {
    result = body();
  } catch (...) {
    failure = std::current_exception();
  }
  if (barrier) file_barrier(f);
  if (failure) std::rethrow_exception(failure);
  return result;
}

}  // namespace gridmpi::core
