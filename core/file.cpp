// MPI-IO on POSIX files: open/close, views, data access, file pointers,
// atomicity, error handlers.  See core/file.hpp and "MPI-IO" in
// core/README.md.
#include "core/file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <random>
#include <span>

#include <fmt/format.h>

#include "conf/log.hpp"
#include "core/api.hpp"
#include "core/coll/coll.hpp"
#include "core/datatype.hpp"
#include "core/errhandler.hpp"
#include "core/group.hpp"
#include "core/info.hpp"
#include "core/runtime.hpp"
#include "request/request.hpp"

namespace gridmpi::core {

namespace {

constexpr int access_bits = MPI_MODE_RDONLY | MPI_MODE_WRONLY | MPI_MODE_RDWR;
constexpr int known_bits = access_bits | MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_DELETE_ON_CLOSE |
                           MPI_MODE_UNIQUE_OPEN | MPI_MODE_APPEND | MPI_MODE_SEQUENTIAL;

int errno_class(int e) {
  switch (e) {
    case ENOENT: return MPI_ERR_NO_SUCH_FILE;
    case EEXIST: return MPI_ERR_FILE_EXISTS;
    case EACCES:
    case EPERM: return MPI_ERR_ACCESS;
    case EROFS: return MPI_ERR_READ_ONLY;
    case ENOSPC:
    case EFBIG: return MPI_ERR_NO_SPACE;
    case EDQUOT: return MPI_ERR_QUOTA;
    case ENAMETOOLONG:
    case ENOTDIR:
    case EISDIR:
    case ELOOP: return MPI_ERR_BAD_FILE;
    case ETXTBSY:
    case EBUSY: return MPI_ERR_FILE_IN_USE;
    default: return MPI_ERR_IO;
  }
}

[[noreturn]] void throw_errno(int e, const std::string& what) {
  throw MpiError(errno_class(e), fmt::format("{}: {}", what, std::strerror(e)));
}

// ---- byte I/O ----

void pwrite_all(int fd, const std::byte* data, MPI_Offset length, MPI_Offset offset, const File& f) {
  while (length > 0) {
    ssize_t n = ::pwrite(fd, data, static_cast<std::size_t>(length), static_cast<off_t>(offset));
    if (n < 0) {
      if (errno == EINTR) continue;
      throw_errno(errno, fmt::format("write of {} bytes at offset {} of {}", length, offset, f.path));
    }
    if (n == 0) throw MpiError(MPI_ERR_IO, fmt::format("write at offset {} of {} wrote nothing", offset, f.path));
    data += n;
    length -= n;
    offset += n;
  }
}

// Returns the bytes read (fewer than length only at the end of the file).
MPI_Offset pread_all(int fd, std::byte* data, MPI_Offset length, MPI_Offset offset, const File& f) {
  MPI_Offset done = 0;
  while (done < length) {
    ssize_t n = ::pread(fd, data + done, static_cast<std::size_t>(length - done), static_cast<off_t>(offset + done));
    if (n < 0) {
      if (errno == EINTR) continue;
      throw_errno(errno, fmt::format("read of {} bytes at offset {} of {}", length, offset, f.path));
    }
    if (n == 0) break;
    done += n;
  }
  return done;
}

// Byte-range locks: open-file-description locks where the kernel has them
// (not dropped when another descriptor of the file is closed), else POSIX.
void range_lock(int fd, short type, MPI_Offset start, MPI_Offset length, const std::string& what) {
  struct flock lk{};
  lk.l_type = type;
  lk.l_whence = SEEK_SET;
  lk.l_start = static_cast<off_t>(start);
  lk.l_len = static_cast<off_t>(length);
#ifdef F_OFD_SETLKW
  int cmd = F_OFD_SETLKW;
#else
  int cmd = F_SETLKW;
#endif
  while (::fcntl(fd, cmd, &lk) != 0) {
    if (errno == EINTR) continue;
#ifdef F_OFD_SETLKW
    if (errno == EINVAL && cmd == F_OFD_SETLKW) {  // kernel without OFD locks
      cmd = F_SETLKW;
      lk.l_pid = 0;
      continue;
    }
#endif
    throw_errno(errno, fmt::format("lock of {}", what));
  }
}

struct RangeLock {
  int fd = -1;
  MPI_Offset start = 0, length = 0;
  std::string what;
  RangeLock(int fd_, short type, MPI_Offset s, MPI_Offset l, std::string w)
      : fd(fd_), start(s), length(l), what(std::move(w)) {
    range_lock(fd, type, start, length, what);
  }
  ~RangeLock() {
    try {
      range_lock(fd, F_UNLCK, start, length, what);
    } catch (...) {
    }
  }
  RangeLock(const RangeLock&) = delete;
  RangeLock& operator=(const RangeLock&) = delete;
};

// ---- the shared file pointer: 8 bytes in an unlinked counter file ----

MPI_Offset counter_read(const File& f) {
  long long v = 0;
  std::byte* p = reinterpret_cast<std::byte*>(&v);
  if (pread_all(f.shared_fd, p, sizeof v, 0, f) != sizeof v)
    throw MpiError(MPI_ERR_IO, "the shared file pointer's counter file is truncated");
  return v;
}

void counter_write(const File& f, MPI_Offset value) {
  long long v = value;
  pwrite_all(f.shared_fd, reinterpret_cast<const std::byte*>(&v), sizeof v, 0, f);
}

MPI_Offset shared_fetch_add(const File& f, MPI_Offset delta) {
  RangeLock lock(f.shared_fd, F_WRLCK, 0, 8, "the shared file pointer");
  MPI_Offset old = counter_read(f);
  if (delta != 0) counter_write(f, old + delta);
  return old;
}

void shared_set(const File& f, MPI_Offset value) {
  RangeLock lock(f.shared_fd, F_WRLCK, 0, 8, "the shared file pointer");
  counter_write(f, value);
}

MPI_Offset shared_get(const File& f) {
  RangeLock lock(f.shared_fd, F_RDLCK, 0, 8, "the shared file pointer");
  return counter_read(f);
}

std::string directory_of(const std::string& path) {
  auto slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

std::string base_of(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// Collective: rank 0 creates the counter file (next to the data file, so
// that processes of other hosts sharing the file system see it; in TMPDIR
// when that directory is not writable), everyone opens it, rank 0 unlinks
// it.  Nothing is left behind, even if the job dies later.
void open_shared_pointer(File& f, Comm& c, MPI_Offset initial) {
  char name[4096] = {};
  int failed = 0;
  if (c.rank == 0) {
    static std::atomic<unsigned> serial{0};
    std::random_device rd;
    std::string tag = fmt::format("{}.{}.{:08x}", getpid(), serial++, rd());
    const char* tmp = std::getenv("TMPDIR");
    std::vector<std::string> candidates = {
        fmt::format("{}/.{}.gridmpi-shfp.{}", directory_of(f.path), base_of(f.path), tag),
        fmt::format("{}/gridmpi-shfp.{}", tmp && *tmp ? tmp : "/tmp", tag)};
    int fd = -1;
    std::string chosen;
    for (const auto& candidate : candidates) {
      fd = ::open(candidate.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
      if (fd >= 0) {
        chosen = candidate;
        break;
      }
    }
    if (fd < 0 || chosen.size() >= sizeof name) {
      failed = 1;
      log().warn("MPI_File_open: cannot create the shared file pointer of {}: {}", f.path, std::strerror(errno));
    } else {
      f.shared_fd = fd;
      std::memcpy(name, chosen.c_str(), chosen.size());
      try {
        counter_write(f, initial);
      } catch (...) {
        failed = 1;
      }
    }
  }
  coll::bcast(name, sizeof name, MPI_CHAR, 0, c);
  if (c.rank != 0 && name[0]) {
    f.shared_fd = ::open(name, O_RDWR | O_CLOEXEC);
    if (f.shared_fd < 0) {
      failed = 1;
      log().warn("MPI_File_open: cannot open the shared file pointer {}: {}", name, std::strerror(errno));
    }
  }
  if (!name[0]) failed = 1;
  int any_failed = 0;
  coll::allreduce(&failed, &any_failed, 1, MPI_INT, MPI_MAX, c);
  if (c.rank == 0 && name[0]) ::unlink(name);
  if (any_failed)
    throw MpiError(MPI_ERR_IO, fmt::format("cannot set up the shared file pointer of {}", f.path));
}

// ---- views ----

void check_amode(int amode) {
  int access = amode & access_bits;
  if (access != MPI_MODE_RDONLY && access != MPI_MODE_WRONLY && access != MPI_MODE_RDWR)
    throw MpiError(MPI_ERR_AMODE, fmt::format("amode {:#x}: exactly one of MPI_MODE_RDONLY, MPI_MODE_WRONLY "
                                              "and MPI_MODE_RDWR is required", amode));
  if ((amode & MPI_MODE_RDONLY) && (amode & (MPI_MODE_CREATE | MPI_MODE_EXCL)))
    throw MpiError(MPI_ERR_AMODE, fmt::format("amode {:#x}: MPI_MODE_CREATE and MPI_MODE_EXCL cannot be "
                                              "used with MPI_MODE_RDONLY", amode));
  if ((amode & MPI_MODE_RDWR) && (amode & MPI_MODE_SEQUENTIAL))
    throw MpiError(MPI_ERR_AMODE, fmt::format("amode {:#x}: MPI_MODE_SEQUENTIAL cannot be used with "
                                              "MPI_MODE_RDWR", amode));
  if (amode & ~known_bits) throw MpiError(MPI_ERR_AMODE, fmt::format("amode {:#x}: unknown mode bits", amode));
}

std::string strip_prefix(const std::string& name) {
  // ROMIO-style file system prefixes ("ufs:", "nfs:"...): every file here is
  // a POSIX file.  A one-letter prefix could be a drive, not a file system.
  auto colon = name.find(':');
  if (colon != std::string::npos && colon > 1 && name.find('/') > colon) {
    std::string prefix = name.substr(0, colon);
    if (std::all_of(prefix.begin(), prefix.end(), [](char ch) { return std::isalnum(static_cast<unsigned char>(ch)); }))
      return name.substr(colon + 1);
  }
  return name;
}

struct Datarep {
  MPI_Datarep_conversion_function* read_fn = nullptr;
  MPI_Datarep_conversion_function* write_fn = nullptr;
  MPI_Datarep_extent_function* extent_fn = nullptr;
  void* extra_state = nullptr;
};

std::map<std::string, Datarep>& dataraps() {
  static std::map<std::string, Datarep> registered;
  return registered;
}

// How the data of a file looks: "native" and "internal" (the memory image),
// "external32" (core/datatype_external32.cpp), or a representation of
// MPI_Register_datarep (its conversion and extent functions).
struct Representation {
  enum Kind { native, external32, user } kind = native;
  const Datarep* registered = nullptr;  // user

  // Bytes in the file of one element of a predefined type.
  MPI_Aint basic_size(MPI_Datatype basic) const {
    if (kind == external32) return static_cast<MPI_Aint>(core::external32_size(basic, 1));
    if (kind == user && registered->extent_fn) {
      MPI_Aint extent = 0;
      int rc = registered->extent_fn(basic, &extent, registered->extra_state);
      if (rc != MPI_SUCCESS) throw MpiError(rc, "the data representation's extent function failed");
      if (extent < 0) throw MpiError(MPI_ERR_ARG, "the data representation's extent function gave a negative extent");
      return extent;
    }
    return static_cast<MPI_Aint>(datatype(basic).size);
  }
};

Representation representation_of(const std::string& rep) {
  Representation r;
  if (rep == "native" || rep == "internal") return r;
  if (rep == "external32") {
    r.kind = Representation::external32;
    return r;
  }
  auto it = dataraps().find(rep);
  if (it == dataraps().end())
    throw MpiError(MPI_ERR_UNSUPPORTED_DATAREP, fmt::format("unknown data representation \"{}\"", rep));
  r.kind = Representation::user;
  r.registered = &it->second;
  return r;
}

// The layout a type has in a file of a non-native representation (MPI-3.1
// 13.5.1): every predefined type becomes opaque bytes of its size in the
// file, and the type is rebuilt with the same constructor calls.  So the
// displacements that count extents of an older type (contiguous, vector,
// indexed, indexed_block, subarray, darray: the portable types) scale with
// the file sizes, and the byte displacements of hvector, hindexed, struct
// and resized stay as the program gave them ("no scaling will be done").
// Owns the types it builds and frees them when destroyed.
class FileLayout {
 public:
  explicit FileLayout(const Representation& rep) : rep_(rep) {}
  FileLayout(const FileLayout&) = delete;
  FileLayout& operator=(const FileLayout&) = delete;
  ~FileLayout() {
    for (MPI_Datatype t : created_) {
      try {
        release_datatype(t);
      } catch (...) {
      }
    }
  }

  // The committed file-layout twin of type.
  MPI_Datatype of(MPI_Datatype type) {
    MPI_Datatype twin = build(type);
    type_commit(twin);
    return twin;
  }

 private:
  MPI_Datatype keep(MPI_Datatype t) {
    created_.push_back(t);
    return t;
  }

  MPI_Datatype build(MPI_Datatype type) {
    if (auto it = memo_.find(type); it != memo_.end()) return it->second;
    MPI_Datatype twin = rebuild(type);
    memo_[type] = twin;
    return twin;
  }

  MPI_Datatype rebuild(MPI_Datatype type) {
    const Datatype& t = datatype(type);
    if (t.predefined) {
      if (type == MPI_LB || type == MPI_UB || t.size == 0) return type;
      MPI_Aint bytes = rep_.basic_size(type);
      if (bytes == 1) return MPI_BYTE;
      return keep(type_contiguous(static_cast<int>(bytes), MPI_BYTE));
    }
    const std::vector<int>& i = t.contents_integers;
    const std::vector<MPI_Aint>& a = t.contents_addresses;
    std::vector<MPI_Datatype> kids;
    for (MPI_Datatype child : t.contents_types) kids.push_back(build(child));
    switch (t.combiner) {
      case MPI_COMBINER_DUP:
        return kids[0];
      case MPI_COMBINER_CONTIGUOUS:
        return keep(type_contiguous(i[0], kids[0]));
      case MPI_COMBINER_VECTOR:
        return keep(type_vector(i[0], i[1], i[2], kids[0]));
      case MPI_COMBINER_HVECTOR:
        return keep(type_hvector(i[0], i[1], a[0], kids[0]));
      case MPI_COMBINER_INDEXED:
        return keep(type_indexed(i[0], i.data() + 1, i.data() + 1 + i[0], kids[0]));
      case MPI_COMBINER_HINDEXED:
        return keep(type_hindexed(i[0], i.data() + 1, a.data(), kids[0]));
      case MPI_COMBINER_INDEXED_BLOCK:
        return keep(type_indexed_block(i[0], i[1], i.data() + 2, kids[0]));
      case MPI_COMBINER_HINDEXED_BLOCK:
        return keep(type_hindexed_block(i[0], i[1], a.data(), kids[0]));
      case MPI_COMBINER_STRUCT:
        return keep(type_struct(i[0], i.data() + 1, a.data(), kids.data()));
      case MPI_COMBINER_RESIZED:
        return keep(type_resized(kids[0], a[0], a[1]));
      case MPI_COMBINER_SUBARRAY: {
        int n = i[0];
        return keep(type_subarray(n, i.data() + 1, i.data() + 1 + n, i.data() + 1 + 2 * n, i[1 + 3 * n], kids[0]));
      }
      case MPI_COMBINER_DARRAY: {
        int n = i[2];
        const int* g = i.data() + 3;
        return keep(type_darray(i[0], i[1], n, g, g + n, g + 2 * n, g + 3 * n, g[4 * n], kids[0]));
      }
      default:
        throw MpiError(MPI_ERR_TYPE, fmt::format("the datatype {} (combiner {}) has no layout in a file of a "
                                                 "non-native data representation",
                                                 t.name.empty() ? std::to_string(type) : t.name, t.combiner));
    }
  }

  Representation rep_;
  std::vector<MPI_Datatype> created_;
  std::map<MPI_Datatype, MPI_Datatype> memo_;
};

struct View {
  MPI_Offset etype_size = 1, tile_size = 1, tile_extent = 1;
  std::vector<ViewSegment> segments;
};

// The standard (13.3) wants the type maps of etype and filetype to have
// non-negative, monotonically non-decreasing displacements; like ROMIO we
// also refuse overlapping entries unless the file is read-only, and report
// MPI_ERR_IO.
void check_file_type(const Datatype& t, const char* what, bool read_only) {
  MPI_Aint end = 0, start = 0;
  t.for_each_block(1, [&](MPI_Aint displacement, MPI_Datatype basic, std::size_t count) {
    MPI_Aint length = static_cast<MPI_Aint>(count * datatype(basic).size);
    if (length == 0) return;
    if (displacement < 0)
      throw MpiError(MPI_ERR_IO, fmt::format("the {} has a negative displacement ({})", what, displacement));
    if (displacement < start)
      throw MpiError(MPI_ERR_IO, fmt::format("the {}'s displacements decrease (at {})", what, displacement));
    if (displacement < end && !read_only)  // overlaps can only be read
      throw MpiError(MPI_ERR_IO, fmt::format("the {}'s entries overlap (at {}) and the file is writable", what,
                                             displacement));
    start = displacement;
    end = std::max(end, displacement + length);
  });
}

View build_view(MPI_Datatype etype, MPI_Datatype filetype, bool read_only, const Representation& rep) {
  committed_datatype(etype);
  committed_datatype(filetype);
  FileLayout layout(rep);
  if (rep.kind != Representation::native) {
    etype = layout.of(etype);
    filetype = layout.of(filetype);
  }
  const Datatype& et = datatype(etype);
  const Datatype& ft = datatype(filetype);
  check_file_type(et, "etype", read_only);
  check_file_type(ft, "filetype", read_only);
  View v;
  if (et.size == 0) throw MpiError(MPI_ERR_ARG, "the etype has size 0");
  if (ft.size == 0) throw MpiError(MPI_ERR_ARG, "the filetype has size 0");
  if (ft.size % et.size != 0)
    throw MpiError(MPI_ERR_ARG, fmt::format("the filetype's size {} is not a multiple of the etype's size {}",
                                            ft.size, et.size));
  v.etype_size = static_cast<MPI_Offset>(et.size);
  v.tile_size = static_cast<MPI_Offset>(ft.size);
  v.tile_extent = ft.extent();
  MPI_Offset stream = 0;
  ft.for_each_block(1, [&](MPI_Aint displacement, MPI_Datatype basic, std::size_t count) {
    MPI_Offset length = static_cast<MPI_Offset>(count * datatype(basic).size);
    if (length == 0) return;
    if (displacement < 0)
      throw MpiError(MPI_ERR_ARG, fmt::format("the filetype has a negative displacement ({})", displacement));
    if (!v.segments.empty() && v.segments.back().offset + v.segments.back().length == displacement)
      v.segments.back().length += length;
    else
      v.segments.push_back({displacement, length, stream});
    stream += length;
  });
  if (v.segments.empty()) throw MpiError(MPI_ERR_ARG, "the filetype has no data");
  return v;
}

bool contiguous_view(const File& f) {
  return f.segments.size() == 1 && f.segments[0].offset == 0 && f.tile_extent == f.tile_size;
}

struct Piece {
  MPI_Offset offset, length, stream;
};

// The file pieces of bytes [start, start + length) of the view's data
// stream, merged where they touch, in stream order.
std::vector<Piece> map_stream(const File& f, MPI_Offset start, MPI_Offset length) {
  std::vector<Piece> pieces;
  if (length <= 0) return pieces;
  if (contiguous_view(f)) {
    pieces.push_back({f.disp + start, length, 0});
    return pieces;
  }
  MPI_Offset tile = start / f.tile_size;
  MPI_Offset in_tile = start % f.tile_size;
  auto it = std::upper_bound(f.segments.begin(), f.segments.end(), in_tile,
                             [](MPI_Offset value, const ViewSegment& s) { return value < s.stream; });
  std::size_t i = static_cast<std::size_t>(it - f.segments.begin()) - 1;
  MPI_Offset done = 0;
  while (done < length) {
    const ViewSegment& s = f.segments[i];
    MPI_Offset within = in_tile - s.stream;
    MPI_Offset take = std::min(s.length - within, length - done);
    MPI_Offset offset = f.disp + tile * f.tile_extent + s.offset + within;
    if (!pieces.empty() && pieces.back().offset + pieces.back().length == offset)
      pieces.back().length += take;
    else
      pieces.push_back({offset, take, done});
    done += take;
    in_tile += take;
    if (in_tile == s.stream + s.length) {
      if (++i == f.segments.size()) {
        i = 0;
        ++tile;
        in_tile = 0;
      }
    }
  }
  return pieces;
}

// The view offset (etypes, rounded up) of the end of the file.
MPI_Offset view_offset_of(const File& f, MPI_Offset byte_size) {
  if (byte_size <= f.disp) return 0;
  MPI_Offset bytes = byte_size - f.disp;
  MPI_Offset tiles = f.tile_extent > 0 ? bytes / f.tile_extent : 0;
  MPI_Offset rest = f.tile_extent > 0 ? bytes % f.tile_extent : bytes;
  MPI_Offset stream = tiles * f.tile_size;
  for (const ViewSegment& s : f.segments) stream += std::clamp<MPI_Offset>(rest - s.offset, 0, s.length);
  return (stream + f.etype_size - 1) / f.etype_size;
}

// ---- checks ----

void require_readable(const File& f) {
  if (f.amode & MPI_MODE_WRONLY)
    throw MpiError(MPI_ERR_ACCESS, fmt::format("{} was opened MPI_MODE_WRONLY: it cannot be read", f.filename));
}

void require_writable(const File& f) {
  if (f.amode & MPI_MODE_RDONLY)
    throw MpiError(MPI_ERR_READ_ONLY, fmt::format("{} was opened MPI_MODE_RDONLY: it cannot be written", f.filename));
}

void require_not_sequential(const File& f, const char* what) {
  if (f.amode & MPI_MODE_SEQUENTIAL)
    throw MpiError(MPI_ERR_UNSUPPORTED_OPERATION,
                   fmt::format("{} was opened MPI_MODE_SEQUENTIAL: {} is not allowed", f.filename, what));
}

const Datatype& access_type(int count, MPI_Datatype type) {
  if (count < 0) throw MpiError(MPI_ERR_COUNT, fmt::format("negative count {}", count));
  return committed_datatype(type);
}

// ---- data access through the view ----

// Bytes of (count, type) in the file's representation.
MPI_Offset stream_bytes(const Representation& rep, int count, MPI_Datatype type) {
  const Datatype& t = datatype(type);
  switch (rep.kind) {
    case Representation::native: break;
    case Representation::external32:
      return static_cast<MPI_Offset>(external32_size(type, static_cast<std::size_t>(count)));
    case Representation::user: {
      FileLayout layout(rep);
      return static_cast<MPI_Offset>(datatype(layout.of(type)).size) * count;
    }
  }
  return static_cast<MPI_Offset>(t.size) * count;
}

// Converts (count, type) at buf into the file representation at out
// (stream_bytes long).
void to_file(const Representation& rep, const void* buf, int count, MPI_Datatype type, std::byte* out) {
  const Datatype& t = datatype(type);
  if (rep.kind == Representation::external32) {
    pack_external32(buf, static_cast<std::size_t>(count), type, out);
  } else if (rep.kind == Representation::user && rep.registered->write_fn) {
    int rc = rep.registered->write_fn(const_cast<void*>(buf), type, count, out, 0, rep.registered->extra_state);
    if (rc != MPI_SUCCESS) throw MpiError(rc, "the data representation's write conversion function failed");
  } else {
    t.pack(buf, static_cast<std::size_t>(count), out);
  }
}

// Converts the got bytes at in (the file representation of up to count
// elements) into buf; returns the native bytes filled (the status count).
MPI_Offset from_file(const Representation& rep, const std::byte* in, MPI_Offset got, int count, MPI_Datatype type,
                     void* buf) {
  const Datatype& t = datatype(type);
  if (got <= 0) return 0;
  auto n = static_cast<std::size_t>(count);
  auto have = static_cast<std::size_t>(got);
  if (rep.kind == Representation::external32) {
    if (have == external32_size(type, n))
      unpack_external32(in, n, type, buf);
    else
      unpack_external32_range(std::span<const std::byte>(in, have), n, type, 0, buf);
    return static_cast<MPI_Offset>(native_bytes_of_external32(type, n, have));
  }
  // A registered representation converts whole elements only.
  MPI_Offset one = stream_bytes(rep, 1, type);
  int whole = one > 0 ? static_cast<int>(std::min<MPI_Offset>(got / one, count)) : count;
  if (whole == 0) return 0;
  if (rep.registered->read_fn) {
    int rc = rep.registered->read_fn(buf, type, whole, const_cast<std::byte*>(in), 0, rep.registered->extra_state);
    if (rc != MPI_SUCCESS) throw MpiError(rc, "the data representation's read conversion function failed");
  } else {
    t.unpack(in, static_cast<std::size_t>(whole), buf);
  }
  return static_cast<MPI_Offset>(t.size) * whole;
}

Access write_view(File& f, MPI_Offset offset, const void* buf, int count, MPI_Datatype type) {
  require_writable(f);
  const Datatype& t = access_type(count, type);
  if (offset < 0) throw MpiError(MPI_ERR_ARG, fmt::format("negative offset {}", offset));
  Representation rep = representation_of(f.datarep);
  MPI_Offset bytes = stream_bytes(rep, count, type);
  if (bytes == 0) return {};
  std::vector<std::byte> packed;
  const std::byte* data;
  if (rep.kind == Representation::native && t.contiguous) {
    data = static_cast<const std::byte*>(buf) + t.true_lb;
  } else {
    packed.resize(static_cast<std::size_t>(bytes));
    to_file(rep, buf, count, type, packed.data());
    data = packed.data();
  }
  std::vector<Piece> pieces = map_stream(f, offset * f.etype_size, bytes);
  std::unique_ptr<RangeLock> lock;
  if (f.atomic) {
    MPI_Offset lo = pieces.front().offset, hi = 0;
    for (const Piece& p : pieces) {
      lo = std::min(lo, p.offset);
      hi = std::max(hi, p.offset + p.length);
    }
    lock = std::make_unique<RangeLock>(f.fd, F_WRLCK, lo, hi - lo, f.path);
  }
  for (const Piece& p : pieces) pwrite_all(f.fd, data + p.stream, p.length, p.offset, f);
  return {static_cast<MPI_Offset>(t.size) * count, bytes};
}

Access read_view(File& f, MPI_Offset offset, void* buf, int count, MPI_Datatype type) {
  require_readable(f);
  const Datatype& t = access_type(count, type);
  if (offset < 0) throw MpiError(MPI_ERR_ARG, fmt::format("negative offset {}", offset));
  Representation rep = representation_of(f.datarep);
  MPI_Offset bytes = stream_bytes(rep, count, type);
  if (bytes == 0) return {};
  std::vector<std::byte> packed;
  std::byte* data;
  if (rep.kind == Representation::native && t.contiguous) {
    data = static_cast<std::byte*>(buf) + t.true_lb;
  } else {
    packed.resize(static_cast<std::size_t>(bytes));
    data = packed.data();
  }
  std::vector<Piece> pieces = map_stream(f, offset * f.etype_size, bytes);
  std::unique_ptr<RangeLock> lock;
  if (f.atomic && !(f.amode & MPI_MODE_WRONLY)) {
    MPI_Offset lo = pieces.front().offset, hi = 0;
    for (const Piece& p : pieces) {
      lo = std::min(lo, p.offset);
      hi = std::max(hi, p.offset + p.length);
    }
    lock = std::make_unique<RangeLock>(f.fd, F_RDLCK, lo, hi - lo, f.path);
  }
  MPI_Offset got = 0;
  for (const Piece& p : pieces) {
    MPI_Offset n = pread_all(f.fd, data + p.stream, p.length, p.offset, f);
    got += n;
    if (n < p.length) break;  // end of file
  }
  if (rep.kind != Representation::native) return {from_file(rep, packed.data(), got, count, type, buf), got};
  if (!t.contiguous && got > 0) {
    if (got == bytes)
      t.unpack(packed.data(), static_cast<std::size_t>(count), buf);
    else
      t.unpack_range(std::span<const std::byte>(packed.data(), static_cast<std::size_t>(got)),
                     static_cast<std::size_t>(count), 0, buf);
  }
  return {got, got};
}

MPI_Offset etypes_of(const File& f, int count, MPI_Datatype type) {
  access_type(count, type);
  return stream_bytes(representation_of(f.datarep), count, type) / f.etype_size;
}

template <bool Write, class Buf>
Access ordered_access(File& f, Buf buf, int count, MPI_Datatype type) {
  Comm& c = comm(f.comm);
  std::exception_ptr failure;
  long long mine = 0;
  try {
    if constexpr (Write) require_writable(f); else require_readable(f);
    mine = etypes_of(f, count, type);
  } catch (...) {
    failure = std::current_exception();
  }
  std::vector<long long> all(static_cast<std::size_t>(c.size));
  coll::allgather(&mine, 1, MPI_LONG_LONG, all.data(), 1, MPI_LONG_LONG, c);
  long long prefix = 0, total = 0;
  for (int r = 0; r < c.size; ++r) {
    if (r < c.rank) prefix += all[static_cast<std::size_t>(r)];
    total += all[static_cast<std::size_t>(r)];
  }
  long long base = -1;
  if (c.rank == 0) {
    try {
      base = shared_fetch_add(f, total);
    } catch (...) {
      if (!failure) failure = std::current_exception();
    }
  }
  coll::bcast(&base, 1, MPI_LONG_LONG, 0, c);
  return file_collective(f, Write, [&] {
    if (failure) std::rethrow_exception(failure);
    if (base < 0) throw MpiError(MPI_ERR_IO, "the shared file pointer could not be updated on rank 0");
    if constexpr (Write)
      return write_view(f, base + prefix, buf, count, type);
    else
      return read_view(f, base + prefix, buf, count, type);
  });
}

// Closes the descriptors and frees the private communicator of a file that
// failed to open or is being closed.
void release_resources(File& f) {
  if (f.fd >= 0) ::close(f.fd);
  if (f.shared_fd >= 0) ::close(f.shared_fd);
  f.fd = f.shared_fd = -1;
  if (f.comm != MPI_COMM_NULL) comm_free(f.comm);
  f.comm = MPI_COMM_NULL;
}

}  // namespace

// ---- handles and errors ----

HandleTable<File>& file_table() {
  static HandleTable<File> table(MPI_ERR_FILE);
  return table;
}

File& file(MPI_File handle) {
  File* f = file_table().find(handle);
  if (!f) throw MpiError(MPI_ERR_FILE, fmt::format("invalid file handle {}", handle));
  return *f;
}

MPI_Errhandler& file_null_errhandler() {
  static MPI_Errhandler handler = MPI_ERRORS_RETURN;
  return handler;
}

int handle_file_error(MPI_File fh, int code, const char* function, const char* message) noexcept {
  try {
    if (state() != State::initialized) return handle_error(MPI_COMM_WORLD, code, function, message);
    File* f = file_table().find(fh);
    MPI_Errhandler handler = f ? f->errhandler : file_null_errhandler();
    MPI_File file_arg = f ? fh : MPI_FILE_NULL;
    // File handlers have the communicator handlers' C signature with an MPI_File.
    if (auto* fn = reinterpret_cast<MPI_File_errhandler_function*>(user_errhandler(handler, code, function, message))) {
      int code_arg = code;
      fn(&file_arg, &code_arg);
    }
  } catch (...) {
    fatal_exit(code, fmt::format("{}: {} ({})", function, message, error_class_name(code)));
  }
  return code;
}

void set_file_status(MPI_Status* status, MPI_Offset bytes) {
  if (!status) return;
  status->MPI_SOURCE = MPI_ANY_SOURCE;
  status->MPI_TAG = MPI_ANY_TAG;
  status->MPI_ERROR = MPI_SUCCESS;
  status->gridmpi_cancelled = 0;
  status->gridmpi_count = bytes;
}

MPI_Request completed_file_request(MPI_Offset bytes) {
  auto r = std::make_unique<request::Request>();
  r->kind = request::RequestKind::collective;
  r->comm = MPI_COMM_NULL;
  r->complete = true;
  set_file_status(&r->status, bytes);
  return runtime().engine->adopt(std::move(r))->handle;
}

void file_barrier(File& f) { coll::barrier(comm(f.comm)); }

// ---- open, close, delete ----

MPI_File file_open(Comm& parent, const char* filename, int amode, MPI_Info info_handle) {
  if (parent.is_inter()) throw MpiError(MPI_ERR_COMM, "files cannot be opened on an intercommunicator");
  if (!filename) throw MpiError(MPI_ERR_BAD_FILE, "the file name is a null pointer");
  if (info_handle != MPI_INFO_NULL) info(info_handle);  // validates
  auto owned = std::make_unique<File>();
  File& f = *owned;
  f.filename = filename;
  f.path = strip_prefix(filename);
  f.amode = amode;
  f.comm = comm_dup(parent);
  try {
    Comm& c = comm(f.comm);
    long long mine[2] = {amode, -static_cast<long long>(amode)}, agreed[2] = {0, 0};
    coll::allreduce(mine, agreed, 2, MPI_LONG_LONG, MPI_MAX, c);
    if (agreed[0] != amode || -agreed[1] != amode)
      throw MpiError(MPI_ERR_NOT_SAME, "the processes gave different amode arguments to MPI_File_open");
    check_amode(amode);
    if (f.path.empty()) throw MpiError(MPI_ERR_BAD_FILE, "empty file name");

    int flags = O_CLOEXEC;
    if (amode & MPI_MODE_RDONLY) flags |= O_RDONLY;
    if (amode & MPI_MODE_WRONLY) flags |= O_WRONLY;
    if (amode & MPI_MODE_RDWR) flags |= O_RDWR;
    mode_t perm = 0666;
    if (info_handle != MPI_INFO_NULL) {
      if (auto p = info(info_handle).get("file_perm")) perm = static_cast<mode_t>(std::strtol(p->c_str(), nullptr, 8));
    }
    // Rank 0 creates (and alone sees MPI_MODE_EXCL), then the others open.
    int result[2] = {0, 0};  // error class, errno
    auto try_open = [&](int extra) {
      f.fd = ::open(f.path.c_str(), flags | extra, perm);
      if (f.fd < 0) {
        result[0] = errno_class(errno);
        result[1] = errno;
        return;
      }
      struct stat st{};
      if (::fstat(f.fd, &st) == 0 && S_ISDIR(st.st_mode)) {
        result[0] = MPI_ERR_BAD_FILE;
        result[1] = EISDIR;
      }
    };
    if (c.rank == 0) {
      int extra = 0;
      if (amode & MPI_MODE_CREATE) extra |= O_CREAT;
      if ((amode & MPI_MODE_CREATE) && (amode & MPI_MODE_EXCL)) extra |= O_EXCL;
      try_open(extra);
    }
    coll::bcast(result, 2, MPI_INT, 0, c);
    if (result[0] != 0)
      throw MpiError(result[0], fmt::format("open {}: {}", f.path, std::strerror(result[1])));
    if (c.rank != 0) try_open(0);
    int worst[2] = {0, 0};
    coll::allreduce(result, worst, 2, MPI_INT, MPI_MAX, c);
    if (worst[0] != 0) {
      if (result[0] != 0) throw MpiError(result[0], fmt::format("open {}: {}", f.path, std::strerror(result[1])));
      throw MpiError(worst[0], fmt::format("open {} failed on another process", f.path));
    }
    MPI_Offset initial = 0;
    if (amode & MPI_MODE_APPEND) initial = file_size(f);  // the default view: etypes are bytes
    f.position = initial;
    open_shared_pointer(f, c, initial);
    if (info_handle != MPI_INFO_NULL) file_set_hints(f, info_handle);
  } catch (...) {
    release_resources(f);
    throw;
  }
  f.errhandler = file_null_errhandler();
  retain_errhandler(f.errhandler);
  MPI_File handle = file_table().add(std::move(owned));
  file_table().get(handle).handle = handle;
  log().debug("MPI_File_open: {} (amode {:#x}) is file {}", f.path, amode, handle);
  return handle;
}

void file_close(MPI_File handle) {
  File& f = file(handle);
  Comm& c = comm(f.comm);
  coll::barrier(c);  // every process is done with the file
  bool remove = (f.amode & MPI_MODE_DELETE_ON_CLOSE) != 0;
  int fd = f.fd;
  f.fd = -1;
  int rc = fd >= 0 ? ::close(fd) : 0;
  int close_errno = errno;
  int unlink_errno = 0;
  if (remove) {
    if (c.rank == 0 && ::unlink(f.path.c_str()) != 0) unlink_errno = errno;
    coll::barrier(c);  // the file is gone when any process returns
  }
  if (!datatype(f.etype).predefined) release_datatype(f.etype);
  if (!datatype(f.filetype).predefined) release_datatype(f.filetype);
  release_errhandler(f.errhandler);
  std::string path = f.path;
  release_resources(f);
  file_table().release(handle);
  if (rc != 0) throw_errno(close_errno, fmt::format("close {}", path));
  if (unlink_errno != 0) throw_errno(unlink_errno, fmt::format("delete on close of {}", path));
}

void file_delete(const char* filename) {
  if (!filename) throw MpiError(MPI_ERR_BAD_FILE, "the file name is a null pointer");
  std::string path = strip_prefix(filename);
  struct stat st{};
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
    throw MpiError(MPI_ERR_BAD_FILE, fmt::format("delete {}: is a directory", path));
  if (::unlink(path.c_str()) != 0) throw_errno(errno, fmt::format("delete {}", path));
}

// ---- data access ----

Access file_read_at(File& f, MPI_Offset offset, void* buf, int count, MPI_Datatype type) {
  require_not_sequential(f, "explicit offsets");
  return read_view(f, offset, buf, count, type);
}

Access file_write_at(File& f, MPI_Offset offset, const void* buf, int count, MPI_Datatype type) {
  require_not_sequential(f, "explicit offsets");
  return write_view(f, offset, buf, count, type);
}

Access file_read(File& f, void* buf, int count, MPI_Datatype type) {
  require_not_sequential(f, "the individual file pointer");
  Access a = read_view(f, f.position, buf, count, type);
  f.position += a.stream / f.etype_size;
  return a;
}

Access file_write(File& f, const void* buf, int count, MPI_Datatype type) {
  require_not_sequential(f, "the individual file pointer");
  Access a = write_view(f, f.position, buf, count, type);
  f.position += a.stream / f.etype_size;
  return a;
}

Access file_read_shared(File& f, void* buf, int count, MPI_Datatype type) {
  require_readable(f);
  MPI_Offset start = shared_fetch_add(f, etypes_of(f, count, type));
  return read_view(f, start, buf, count, type);
}

Access file_write_shared(File& f, const void* buf, int count, MPI_Datatype type) {
  require_writable(f);
  MPI_Offset start = shared_fetch_add(f, etypes_of(f, count, type));
  return write_view(f, start, buf, count, type);
}

Access file_read_ordered(File& f, void* buf, int count, MPI_Datatype type) {
  return ordered_access<false>(f, buf, count, type);
}

Access file_write_ordered(File& f, const void* buf, int count, MPI_Datatype type) {
  return ordered_access<true>(f, buf, count, type);
}

// ---- views and pointers ----

void file_set_view(File& f, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype, const char* datarep,
                   MPI_Info info_handle) {
  Comm& c = comm(f.comm);
  // Checked locally, then agreed: a bad argument anywhere fails everywhere.
  std::exception_ptr failure;
  int mine = 0;
  View v;
  try {
    if (!datarep) throw MpiError(MPI_ERR_ARG, "datarep is a null pointer");
    Representation rep = representation_of(datarep);
    if (info_handle != MPI_INFO_NULL) info(info_handle);
    if (disp == MPI_DISPLACEMENT_CURRENT) {
      if (!(f.amode & MPI_MODE_SEQUENTIAL))
        throw MpiError(MPI_ERR_ARG, "MPI_DISPLACEMENT_CURRENT needs a file opened MPI_MODE_SEQUENTIAL");
    } else if (disp < 0) {
      throw MpiError(MPI_ERR_ARG, fmt::format("negative displacement {}", disp));
    }
    v = build_view(etype, filetype, (f.amode & MPI_MODE_RDONLY) != 0, rep);
  } catch (const MpiError& e) {
    failure = std::current_exception();
    mine = e.error_class();
  } catch (...) {
    failure = std::current_exception();
    mine = MPI_ERR_INTERN;
  }
  int worst = 0;
  coll::allreduce(&mine, &worst, 1, MPI_INT, MPI_MAX, c);
  if (failure) std::rethrow_exception(failure);
  if (worst != 0) throw MpiError(worst, "MPI_File_set_view failed on another process");

  // Nobody uses the shared pointer of the old view any more.
  coll::barrier(c);
  if (disp == MPI_DISPLACEMENT_CURRENT) {
    MPI_Offset current = c.rank == 0 ? shared_get(f) : 0;
    coll::bcast(&current, 1, MPI_LONG_LONG, 0, c);
    disp = file_byte_offset(f, current);
  }
  if (!datatype(etype).predefined) retain_datatype(etype);
  if (!datatype(filetype).predefined) retain_datatype(filetype);
  if (!datatype(f.etype).predefined) release_datatype(f.etype);
  if (!datatype(f.filetype).predefined) release_datatype(f.filetype);
  f.disp = disp;
  f.etype = etype;
  f.filetype = filetype;
  f.datarep = datarep;
  f.etype_size = v.etype_size;
  f.tile_size = v.tile_size;
  f.tile_extent = v.tile_extent;
  f.segments = std::move(v.segments);
  f.position = 0;
  if (info_handle != MPI_INFO_NULL) file_set_hints(f, info_handle);
  if (c.rank == 0) shared_set(f, 0);
  coll::barrier(c);
}

void file_seek(File& f, MPI_Offset offset, int whence) {
  require_not_sequential(f, "MPI_File_seek");
  MPI_Offset target;
  switch (whence) {
    case MPI_SEEK_SET: target = offset; break;
    case MPI_SEEK_CUR: target = f.position + offset; break;
    case MPI_SEEK_END: target = view_offset_of(f, file_size(f)) + offset; break;
    default: throw MpiError(MPI_ERR_ARG, fmt::format("invalid whence {}", whence));
  }
  if (target < 0) throw MpiError(MPI_ERR_ARG, fmt::format("seek to the negative offset {}", target));
  f.position = target;
}

void file_seek_shared(File& f, MPI_Offset offset, int whence) {
  Comm& c = comm(f.comm);
  long long args[2] = {offset, whence}, high[2] = {0, 0}, low[2] = {0, 0};
  long long neg[2] = {-args[0], -args[1]};
  coll::allreduce(args, high, 2, MPI_LONG_LONG, MPI_MAX, c);
  coll::allreduce(neg, low, 2, MPI_LONG_LONG, MPI_MAX, c);
  if (high[0] != -low[0] || high[1] != -low[1])
    throw MpiError(MPI_ERR_NOT_SAME, "the processes gave different offset or whence to MPI_File_seek_shared");
  if (whence != MPI_SEEK_SET && whence != MPI_SEEK_CUR && whence != MPI_SEEK_END)
    throw MpiError(MPI_ERR_ARG, fmt::format("invalid whence {}", whence));
  coll::barrier(c);  // everyone is done with the old position
  long long target = 0;
  if (c.rank == 0) {
    try {
      MPI_Offset base = whence == MPI_SEEK_SET ? 0
                        : whence == MPI_SEEK_CUR ? shared_get(f)
                                                 : view_offset_of(f, file_size(f));
      target = base + offset;
      if (target >= 0) shared_set(f, target);
    } catch (...) {
      target = -2;
    }
  }
  coll::bcast(&target, 1, MPI_LONG_LONG, 0, c);
  if (target == -2) throw MpiError(MPI_ERR_IO, "the shared file pointer could not be updated");
  if (target < 0) throw MpiError(MPI_ERR_ARG, "seek to a negative offset");
}

MPI_Offset file_position_shared(File& f) { return shared_get(f); }

MPI_Offset file_byte_offset(const File& f, MPI_Offset offset) {
  if (offset < 0) throw MpiError(MPI_ERR_ARG, fmt::format("negative offset {}", offset));
  MPI_Offset stream = offset * f.etype_size;
  MPI_Offset tile = stream / f.tile_size, in_tile = stream % f.tile_size;
  auto it = std::upper_bound(f.segments.begin(), f.segments.end(), in_tile,
                             [](MPI_Offset value, const ViewSegment& s) { return value < s.stream; });
  const ViewSegment& s = *(it - 1);
  return f.disp + tile * f.tile_extent + s.offset + (in_tile - s.stream);
}

MPI_Offset file_size(const File& f) {
  struct stat st{};
  if (::fstat(f.fd, &st) != 0) throw_errno(errno, fmt::format("stat {}", f.path));
  return static_cast<MPI_Offset>(st.st_size);
}

void file_set_size(File& f, MPI_Offset size) {
  Comm& c = comm(f.comm);
  int result[2] = {0, 0};
  try {
    require_not_sequential(f, "MPI_File_set_size");
    require_writable(f);
    if (size < 0) throw MpiError(MPI_ERR_ARG, fmt::format("negative size {}", size));
  } catch (const MpiError& e) {
    result[0] = e.error_class();
  }
  coll::barrier(c);  // accesses made before the call by any process are done
  if (result[0] == 0 && c.rank == 0 && ::ftruncate(f.fd, static_cast<off_t>(size)) != 0) {
    result[0] = errno_class(errno);
    result[1] = errno;
  }
  int worst[2];
  coll::allreduce(result, worst, 2, MPI_INT, MPI_MAX, c);
  if (worst[0] != 0)
    throw MpiError(worst[0], fmt::format("set size of {} to {}: {}", f.path, size,
                                         worst[1] ? std::strerror(worst[1]) : "invalid arguments"));
}

void file_preallocate(File& f, MPI_Offset size) {
  Comm& c = comm(f.comm);
  int result[2] = {0, 0};
  try {
    require_not_sequential(f, "MPI_File_preallocate");
    require_writable(f);
    if (size < 0) throw MpiError(MPI_ERR_ARG, fmt::format("negative size {}", size));
  } catch (const MpiError& e) {
    result[0] = e.error_class();
  }
  coll::barrier(c);  // accesses made before the call by any process are done
  if (result[0] == 0 && c.rank == 0) {
    try {
      if (size > file_size(f)) {
        int rc = ::posix_fallocate(f.fd, 0, static_cast<off_t>(size));
        if (rc == EOPNOTSUPP || rc == EINVAL) rc = ::ftruncate(f.fd, static_cast<off_t>(size)) == 0 ? 0 : errno;
        if (rc != 0) {
          result[0] = errno_class(rc);
          result[1] = rc;
        }
      }
    } catch (const MpiError& e) {
      result[0] = e.error_class();
    }
  }
  int worst[2];
  coll::allreduce(result, worst, 2, MPI_INT, MPI_MAX, c);
  if (worst[0] != 0)
    throw MpiError(worst[0], fmt::format("preallocate {} bytes of {}: {}", size, f.path,
                                         worst[1] ? std::strerror(worst[1]) : "invalid arguments"));
}

void file_set_atomicity(File& f, bool atomic) {
  Comm& c = comm(f.comm);
  int mine[2] = {atomic ? 1 : 0, atomic ? 0 : 1}, high[2];
  coll::allreduce(mine, high, 2, MPI_INT, MPI_MAX, c);
  if (high[0] == 1 && high[1] == 1)
    throw MpiError(MPI_ERR_NOT_SAME, "the processes gave different flags to MPI_File_set_atomicity");
  f.atomic = atomic;
}

void file_sync(File& f) {
  if (f.amode & MPI_MODE_RDONLY) return;  // nothing of ours to flush
  if (::fsync(f.fd) != 0 && errno != EINVAL && errno != EROFS) throw_errno(errno, fmt::format("sync {}", f.path));
}

void file_set_hints(File& f, MPI_Info info_handle) {
  if (info_handle == MPI_INFO_NULL) return;
  for (const auto& [key, value] : info(info_handle).entries) f.hints[key] = value;
}

MPI_Aint file_type_extent(const File& f, MPI_Datatype type) {
  const Datatype& t = datatype(type);
  Representation rep = representation_of(f.datarep);
  if (rep.kind == Representation::native) return t.extent();
  FileLayout layout(rep);
  return datatype(layout.of(type)).extent();
}

void register_datarep(const char* name, MPI_Datarep_conversion_function* read_fn,
                      MPI_Datarep_conversion_function* write_fn, MPI_Datarep_extent_function* extent_fn,
                      void* extra_state) {
  if (!name || !*name) throw MpiError(MPI_ERR_ARG, "empty data representation name");
  std::string rep = name;
  if (rep.size() >= MPI_MAX_DATAREP_STRING)
    throw MpiError(MPI_ERR_ARG, fmt::format("data representation name longer than MPI_MAX_DATAREP_STRING - 1"));
  if (rep == "native" || rep == "internal" || rep == "external32" || dataraps().count(rep))
    throw MpiError(MPI_ERR_DUP_DATAREP, fmt::format("data representation \"{}\" is already defined", rep));
  dataraps()[rep] = Datarep{read_fn, write_fn, extent_fn, extra_state};
}

}  // namespace gridmpi::core
