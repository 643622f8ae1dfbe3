#include "p2p/shm/shm_transport.hpp"

#include <boost/asio/buffer.hpp>

#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <fstream>
#include <new>
#include <fmt/format.h>

#include "conf/log.hpp"
#include "conf/registry.hpp"
#include "base/error.hpp"

namespace gridmpi::p2p::shm {

namespace asio = boost::asio;
using boost::system::error_code;

namespace {

const conf::Param<bool> enable_param{
    "shm.enable", true, "",
    "use shared memory between the processes of one host (false: they talk over tcp, as with mpirun -nounix); "
    "never in a job started with mpirun -vendor, whose MPI serves the whole cluster",
    conf::Level::user};
const conf::Param<bool> nounix_param{
    "shm.nounix", false, "",
    "GridMPI's -nounix: true switches the shared-memory transport off (mpirun -nounix sets it)", conf::Level::user,
    {"_YAMPI_DISABLE_UNIX"}};
const conf::Param<std::int64_t> ring_size_param{
    "shm.ring_size", 64 * 1024, "bytes",
    "size of each shared-memory ring (one per pair of processes of a host and direction); a multiple of 4 KiB",
    conf::Level::tuner};
const conf::Param<std::int64_t> eager_limit_param{
    "shm.eager_limit", 8 * 1024, "bytes",
    "payloads up to this size are copied through the ring; larger ones take the large-message path",
    conf::Level::tuner};
const conf::ChoiceParam large_path_param{
    "shm.large_path", "auto", {"auto", "single_copy", "two_copy"},
    "large messages: single_copy (the receiver reads the sender's memory, process_vm_readv), two_copy "
    "(pipelined through the ring) or auto (single copy when the kernel permits it)",
    conf::Level::tuner};

constexpr std::uint64_t segment_magic = 0x4752'4944'5348'4d31ull;  // "GRIDSHM1"
constexpr std::uint32_t hello_magic = 0x47534d48;                   // "GSMH"
constexpr std::uint32_t protocol_version = 1;
constexpr std::size_t max_fragment = std::size_t{4} << 20;
// How long a single-copy send being read keeps a poll-mode waiter spinning
// (progress()): a few times what 4 MiB take to copy here.
constexpr auto reading_spin = std::chrono::milliseconds(2);
constexpr std::size_t max_kept_buffer = max_fragment;
constexpr int records_per_round = 64;
constexpr char goodbye_byte = 'G';

std::string os_error(int error) { return std::strerror(error); }

std::string read_first_line(const char* path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

std::string namespace_id(const char* path) {
  struct stat st {};
  if (::stat(path, &st) != 0) return "0";
  return fmt::format("{:x}", static_cast<unsigned long long>(st.st_ino));
}

// RAII for a file descriptor received or created before it has an owner.
struct Fd {
  int fd = -1;
  explicit Fd(int f = -1) : fd(f) {}
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int release() {
    int f = fd;
    fd = -1;
    return f;
  }
};

void* map_shared(int fd, std::size_t size, std::size_t offset) {
  void* p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, static_cast<off_t>(offset));
  return p == MAP_FAILED ? nullptr : p;
}

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23  // Linux 5.14
#endif

// Faults a ring's pages in (writable) at once, at the first message of a
// pair: otherwise its first lap takes a page fault every 64 lines on each
// side, a third of the time of the first thousand small messages.  Older
// kernels say EINVAL: then the pages come one fault at a time, as before.
void populate(void* address, std::size_t size) { (void)::madvise(address, size, MADV_POPULATE_WRITE); }

sockaddr_un abstract_address(const std::string& name, socklen_t* length) {
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  a.sun_path[0] = '\0';
  std::size_t n = std::min(name.size(), sizeof(a.sun_path) - 1);
  std::memcpy(a.sun_path + 1, name.data(), n);
  *length = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + n);
  return a;
}

std::string socket_name_of(unsigned uid, std::uint64_t cookie, int rank, long pid) {
  return fmt::format("gridmpi-shm.{}.{:x}.{}.{}", uid, cookie, rank, pid);
}

}  // namespace

// ---- shared and exchanged layouts ------------------------------------------

// The first page of a segment.  `asleep` is the doorbell switch: the owner
// sets it (sequentially consistent, then looks at its rings once more)
// before it may sleep; a sender that publishes a record and then sees it
// set clears it and writes the owner's eventfd.
struct ShmTransport::SegmentHeader {
  alignas(cache_line) std::uint64_t magic;
  std::uint32_t version;
  std::int32_t rank;
  std::uint64_t ring_size;
  alignas(cache_line) std::atomic<std::uint32_t> asleep;
};


namespace {

// Sent once over the unix socket, with the segment and the eventfd attached
// (SCM_RIGHTS).  Native layout: both ends are processes of one host.
struct Hello {
  std::uint32_t magic;
  std::uint32_t version;
  std::uint64_t cookie;
  std::int32_t rank;
  std::int32_t pid;
  std::uint64_t ring_size;
  std::uint64_t segment_size;
  std::uint64_t probe_address;
  std::uint64_t probe_value;
};

}  // namespace

struct ShmTransport::Incoming {
  explicit Incoming(asio::io_context& io, int fd) : descriptor(io, fd) {}
  asio::posix::stream_descriptor descriptor;
  int peer = -1;  // until the hello
};

struct ShmTransport::Peer {
  int rank = -1;
  pid_t pid = 0;
  std::size_t receiver_index = 0;  // in receivers_ and watch_

  // Receiving: the ring from this peer, in our segment.
  void* rx_map = nullptr;
  RingControl* rx_control = nullptr;
  RingReader reader;
  std::uint64_t acked = 0;
  bool rx_streaming = false;  // between the parts of a streamed payload
  std::span<std::byte> rx_target;
  std::size_t rx_filled = 0;
  std::uint64_t rx_token = 0;
  std::vector<std::byte> rx_buffer;  // large payloads without a destination
  bool wake_owed = false;            // to ring its doorbell once we have it
  std::shared_ptr<Incoming> incoming;
  bool goodbye_received = false;
  bool closed = false;

  // Sending: the ring to this peer, in its segment.
  void* tx_header_map = nullptr;
  void* tx_map = nullptr;
  std::size_t tx_map_size = 0;
  SegmentHeader* tx_header = nullptr;
  RingControl* tx_control = nullptr;
  RingWriter writer;
  int doorbell = -1;
  int outgoing = -1;  // our connection to it: hello, goodbye
  bool hello_sent = false;
  std::deque<std::uint64_t> single_copy_tokens;
  std::uint64_t single_copy_done = 0;
  bool tx_streaming = false;
  std::span<const std::byte> tx_payload;
  std::size_t tx_offset = 0;
  std::uint64_t tx_token = 0;
  bool listed_sender = false;
  bool listed_publish = false;  // in to_publish_
  bool tx_populated = false;    // populate() ran on our ring in its segment
  bool rx_populated = false;    // and on its ring in ours

  ~Peer() {
    if (rx_map) ::munmap(rx_map, page_size + reader.capacity() * cache_line);
    if (tx_header_map) ::munmap(tx_header_map, page_size);
    if (tx_map) ::munmap(tx_map, tx_map_size);
    if (doorbell >= 0) ::close(doorbell);
    if (outgoing >= 0) ::close(outgoing);
  }
};

// ---- configuration ----------------------------------------------------------

ShmOptions ShmOptions::from_configuration() {
  ShmOptions o;
  try {
    std::int64_t ring = ring_size_param.get();
    std::int64_t eager = eager_limit_param.get();
    if (ring < 16 * 1024 || ring % static_cast<std::int64_t>(page_size) != 0 || ring > (std::int64_t{1} << 30))
      throw MpiError(MPI_ERR_OTHER, fmt::format("shm.ring_size is {}; use a multiple of 4096 between 16k and 1g", ring));
    if (eager < 0 || static_cast<std::size_t>(eager) + 512 > static_cast<std::size_t>(ring) / 4)
      throw MpiError(MPI_ERR_OTHER,
                     fmt::format("shm.eager_limit is {}; it must stay below a quarter of shm.ring_size ({}) "
                                 "minus 512 bytes: raise shm.ring_size or lower the limit",
                                 eager, ring));
    o.ring_size = static_cast<std::size_t>(ring);
    o.eager_limit = static_cast<std::size_t>(eager);
    std::string path = large_path_param.get();
    o.large_path = path == "single_copy" ? LargePath::single_copy
                   : path == "two_copy"  ? LargePath::two_copy
                                         : LargePath::automatic;
  } catch (const conf::ConfigError& e) {
    throw MpiError(MPI_ERR_OTHER, e.what());
  }
  return o;
}

bool enabled_by_configuration() {
  try {
    return enable_param.get() && !nounix_param.get();
  } catch (const conf::ConfigError& e) {
    throw MpiError(MPI_ERR_OTHER, e.what());
  }
}

std::string host_key() {
  std::string boot = read_first_line("/proc/sys/kernel/random/boot_id");
  std::erase(boot, '-');
  std::erase(boot, ':');
  if (boot.empty()) boot = "noboot";
  return fmt::format("{}.{}.{}", boot, namespace_id("/proc/self/ns/net"), namespace_id("/proc/self/ns/pid"));
}

// ---- construction ------------------------------------------------------------

ShmTransport::ShmTransport(const TransportContext& context, ShmOptions options)
    : context_(context),
      options_(options),
      host_key_(host_key()),
      uid_(::getuid()),
      pid_(::getpid()),
      doorbell_(*context.io),
      listener_(*context.io),
      peers_(static_cast<std::size_t>(context.world_size)),
      life_(std::make_shared<ShmTransport*>(this)) {
  // Armed at half the engine's spin, so that senders ring before it sleeps.
  if (context_.engine_spin) options_.arm_after = *context_.engine_spin / 2;
  probe_value_ = context_.job_cookie ^ (static_cast<std::uint64_t>(pid_) << 32) ^ 0x9e3779b97f4a7c15ull ^
                 static_cast<std::uint64_t>(context_.world_rank);
  create_segment();
  open_listener();
  wait_doorbell();
  wait_listener();
  log().debug("shm: rank {} segment of {} rings of {} bytes, doorbell eventfd {}, socket @{}", context_.world_rank,
              context_.world_size - 1, options_.ring_size, doorbell_fd_, socket_name_);
}

ShmTransport::~ShmTransport() {
  *life_ = nullptr;
  error_code ignored;
  doorbell_.close(ignored);
  listener_.close(ignored);
  for (auto& in : unidentified_) in->descriptor.close(ignored);
  for (auto& p : peers_)
    if (p && p->incoming) p->incoming->descriptor.close(ignored);
  peers_.clear();
  if (header_) ::munmap(header_, page_size);
  if (segment_fd_ >= 0) ::close(segment_fd_);
}

void ShmTransport::create_segment() {
  static_assert(sizeof(SegmentHeader) <= page_size);
  const int me = context_.world_rank;
  std::string name = fmt::format("gridmpi-shm.{}.{:x}.{}", uid_, context_.job_cookie, me);
  int fd = ::memfd_create(name.c_str(), MFD_CLOEXEC);
  if (fd < 0)
    throw MpiError(MPI_ERR_OTHER, fmt::format("shm: rank {}: memfd_create failed: {} (set shm.enable=false to use tcp "
                                              "between the processes of this host)",
                                              me, os_error(errno)));
  segment_fd_ = fd;
  pair_stride_ = page_size + options_.ring_size;
  // Sparse: only the rings of peers that send to us ever get pages.
  segment_size_ = page_size + static_cast<std::size_t>(context_.world_size) * pair_stride_;
  if (::ftruncate(fd, static_cast<off_t>(segment_size_)) != 0)
    throw MpiError(MPI_ERR_OTHER, fmt::format("shm: rank {}: cannot size a segment of {} bytes: {}", me, segment_size_,
                                              os_error(errno)));
  void* p = map_shared(fd, page_size, 0);
  if (!p) throw MpiError(MPI_ERR_OTHER, fmt::format("shm: rank {}: mmap failed: {}", me, os_error(errno)));
  header_ = new (p) SegmentHeader;
  header_->magic = segment_magic;
  header_->version = protocol_version;
  header_->rank = me;
  header_->ring_size = options_.ring_size;
  // Nobody polls us yet: senders ring from the first message on.
  header_->asleep.store(1, std::memory_order_seq_cst);

  doorbell_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (doorbell_fd_ < 0)
    throw MpiError(MPI_ERR_OTHER, fmt::format("shm: rank {}: eventfd failed: {}", me, os_error(errno)));
  doorbell_.assign(doorbell_fd_);
}

void ShmTransport::open_listener() {
  const int me = context_.world_rank;
  socket_name_ = socket_name_of(uid_, context_.job_cookie, me, pid_);
  Fd s(::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (s.fd < 0) throw MpiError(MPI_ERR_OTHER, fmt::format("shm: rank {}: unix socket: {}", me, os_error(errno)));
  socklen_t length = 0;
  sockaddr_un a = abstract_address(socket_name_, &length);
  if (::bind(s.fd, reinterpret_cast<sockaddr*>(&a), length) != 0)
    throw MpiError(MPI_ERR_OTHER, fmt::format("shm: rank {}: cannot bind the abstract unix socket @{}: {}", me,
                                              socket_name_, os_error(errno)));
  if (::listen(s.fd, std::max(128, context_.world_size)) != 0)
    throw MpiError(MPI_ERR_OTHER, fmt::format("shm: rank {}: listen: {}", me, os_error(errno)));
  listener_.assign(s.release());
}

// ---- the doorbell and the unix sockets (io_context handlers) -----------------

void ShmTransport::wait_doorbell() {
  // A read, not a readiness wait: asio tries it at once, so a doorbell rung
  // while no wait was pending is never missed.
  doorbell_.async_read_some(asio::buffer(&doorbell_value_, sizeof doorbell_value_),
                            [life = life_, gate = context_.gate](const error_code& ec, std::size_t) {
                              GateScope scope(gate);
                              ShmTransport* self = *life;
                              if (!self || ec == asio::error::operation_aborted) return;
                              // Delivery happens in progress(), which the engine runs right
                              // after this handler (poll mode: the next round; thread
                              // mode: when the gate is left).
                              self->wait_doorbell();
                            });
}

void ShmTransport::wait_listener() {
  listener_.async_wait(asio::posix::descriptor_base::wait_read,
                       [life = life_, gate = context_.gate](const error_code& ec) {
                         GateScope scope(gate);
                         ShmTransport* self = *life;
                         if (!self || ec == asio::error::operation_aborted) return;
                         for (;;) {
                           int fd = ::accept4(self->listener_.native_handle(), nullptr, nullptr,
                                              SOCK_NONBLOCK | SOCK_CLOEXEC);
                           if (fd < 0) {
                             if (errno == EINTR) continue;
                             if (errno != EAGAIN && errno != EWOULDBLOCK)
                               log().warn("shm: rank {}: accept failed: {}", self->context_.world_rank,
                                          os_error(errno));
                             break;
                           }
                           auto in = std::make_shared<Incoming>(*self->context_.io, fd);
                           self->unidentified_.push_back(in);
                           self->read_incoming(in);
                         }
                         self->wait_listener();
                       });
}

void ShmTransport::wait_incoming(const std::shared_ptr<Incoming>& in) {
  in->descriptor.async_wait(asio::posix::descriptor_base::wait_read,
                            [life = life_, gate = context_.gate, in](const error_code& ec) {
                              GateScope scope(gate);
                              ShmTransport* self = *life;
                              if (!self || ec == asio::error::operation_aborted || !in->descriptor.is_open()) return;
                              self->read_incoming(in);
                            });
}

void ShmTransport::read_incoming(const std::shared_ptr<Incoming>& in) {
  for (;;) {
    Hello hello{};
    iovec iov{&hello, sizeof hello};
    alignas(cmsghdr) char control[CMSG_SPACE(2 * sizeof(int))];
    msghdr m{};
    m.msg_iov = &iov;
    m.msg_iovlen = 1;
    m.msg_control = control;
    m.msg_controllen = sizeof control;
    ssize_t n = ::recvmsg(in->descriptor.native_handle(), &m, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return wait_incoming(in);
    std::vector<int> fds;
    for (cmsghdr* c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c))
      if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
        std::size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (std::size_t i = 0; i < count; ++i) {
          int fd;
          std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
          fds.push_back(fd);
        }
      }
    if (n <= 0) {
      for (int fd : fds) ::close(fd);
      return peer_closed(*in);
    }
    if (in->peer < 0) {
      if (n != static_cast<ssize_t>(sizeof hello) || fds.size() != 2 || (m.msg_flags & (MSG_TRUNC | MSG_CTRUNC))) {
        for (int fd : fds) ::close(fd);
        log().warn("shm: rank {}: refused a connection on @{}: not a hello ({} bytes, {} descriptors)",
                   context_.world_rank, socket_name_, n, fds.size());
        std::erase(unidentified_, in);
        error_code ignored;
        in->descriptor.close(ignored);
        return;
      }
      accept_hello(in, &hello, fds[0], fds[1]);
      if (in->peer < 0) return;  // refused
      continue;
    }
    for (int fd : fds) ::close(fd);
    if (n == 1 && reinterpret_cast<const char*>(&hello)[0] == goodbye_byte) {
      peers_[static_cast<std::size_t>(in->peer)]->goodbye_received = true;
      continue;
    }
    fail(fmt::format("shm: rank {}: unexpected message of {} bytes from rank {} on its connection",
                     context_.world_rank, n, in->peer));
    return;
  }
}

void ShmTransport::accept_hello(const std::shared_ptr<Incoming>& in, const void* raw, int segment_fd, int doorbell_fd) {
  Fd segment(segment_fd), doorbell(doorbell_fd);
  const Hello& hello = *static_cast<const Hello*>(raw);
  const int me = context_.world_rank;
  auto refuse = [&](const std::string& why) {
    log().warn("shm: rank {}: refused a connection on @{}: {}", me, socket_name_, why);
    std::erase(unidentified_, in);
    error_code ignored;
    in->descriptor.close(ignored);
  };
  if (hello.magic != hello_magic || hello.version != protocol_version)
    return refuse(fmt::format("bad magic or protocol version {} (mixed gridmpi installations?)", hello.version));
  if (hello.cookie != context_.job_cookie) return refuse("job cookie does not match (a process of another job?)");
  const int rank = hello.rank;
  if (rank < 0 || rank >= context_.world_size || rank == me || !peers_[static_cast<std::size_t>(rank)])
    return refuse(fmt::format("claims to be rank {}, which is not a local peer of rank {}", rank, me));
  Peer& p = *peers_[static_cast<std::size_t>(rank)];
  if (p.incoming) return refuse(fmt::format("rank {} is already connected", rank));
  ucred cred{};
  socklen_t cred_length = sizeof cred;
  if (::getsockopt(in->descriptor.native_handle(), SOL_SOCKET, SO_PEERCRED, &cred, &cred_length) != 0 ||
      cred.pid != p.pid || cred.pid != hello.pid || cred.uid != uid_)
    return refuse(fmt::format("rank {} should be pid {} of uid {}, the connection comes from pid {} uid {}", rank, p.pid,
                              uid_, cred.pid, cred.uid));
  const std::size_t stride = page_size + hello.ring_size;
  const std::size_t offset = page_size + static_cast<std::size_t>(me) * stride;
  if (hello.ring_size % page_size != 0 || hello.ring_size < 4 * page_size || offset + stride > hello.segment_size)
    return refuse(fmt::format("rank {} announces a segment of {} bytes with rings of {}", rank, hello.segment_size,
                              hello.ring_size));
  void* head = map_shared(segment.fd, page_size, 0);
  void* block = head ? map_shared(segment.fd, stride, offset) : nullptr;
  if (!block) {
    int error = errno;
    if (head) ::munmap(head, page_size);
    fail(fmt::format("shm: rank {}: cannot map the segment of rank {}: {}", me, rank, os_error(error)));
    return;
  }
  p.tx_header_map = head;
  p.tx_header = static_cast<SegmentHeader*>(head);
  p.tx_map = block;
  p.tx_map_size = stride;
  p.tx_control = static_cast<RingControl*>(block);
  p.writer = RingWriter(RingView{p.tx_control, static_cast<std::byte*>(block) + page_size, hello.ring_size / cache_line});
  if (p.tx_header->magic != segment_magic) {
    fail(fmt::format("shm: rank {}: the segment of rank {} has a bad magic", me, rank));
    return;
  }
  p.doorbell = doorbell.release();
  p.incoming = in;
  in->peer = rank;
  std::erase(unidentified_, in);

  // May we read its memory?  Tried once, on a word it told us about.
  SingleCopy decision = SingleCopy::not_permitted;
  std::string why = "shm.large_path=two_copy";
  if (options_.large_path != LargePath::two_copy) {
    std::uint64_t value = 0;
    iovec local{&value, sizeof value};
    iovec remote{reinterpret_cast<void*>(static_cast<std::uintptr_t>(hello.probe_address)), sizeof value};
    ssize_t n = ::process_vm_readv(p.pid, &local, 1, &remote, 1, 0);
    if (n == static_cast<ssize_t>(sizeof value) && value == hello.probe_value) {
      decision = SingleCopy::permitted;
    } else {
      why = n < 0 ? fmt::format("process_vm_readv: {}{}", os_error(errno),
                                errno == EPERM ? " (kernel.yama.ptrace_scope or a seccomp policy forbids it)" : "")
                  : "process_vm_readv read the wrong value";
      if (options_.large_path == LargePath::single_copy) {
        fail(fmt::format("shm: rank {}: shm.large_path=single_copy, but rank {} (pid {}) cannot be read: {}; use "
                         "shm.large_path=auto",
                         me, rank, p.pid, why));
        return;
      }
    }
  }
  p.rx_control->single_copy.store(static_cast<std::uint32_t>(decision), std::memory_order_release);
  if (decision == SingleCopy::permitted)
    log().debug("shm: rank {}: large messages from rank {} by single copy (process_vm_readv)", me, rank);
  else
    log().debug("shm: rank {}: large messages from rank {} by two copies through the ring ({})", me, rank, why);
  if (p.wake_owed) {
    p.wake_owed = false;
    ring(p);
  }
}

void ShmTransport::peer_closed(Incoming& in) {
  error_code ignored;
  in.descriptor.close(ignored);
  if (in.peer < 0) {
    std::erase_if(unidentified_, [&](const auto& u) { return u.get() == &in; });
    return;
  }
  Peer& p = *peers_[static_cast<std::size_t>(in.peer)];
  p.closed = true;
  if (p.goodbye_received) return;
  if (shutting_down_) {
    log().debug("shm: rank {}: rank {} (pid {}) closed without saying goodbye during shutdown", context_.world_rank,
                p.rank, p.pid);
    return;
  }
  fail(fmt::format("shm: rank {}: local peer rank {} (pid {}) exited without saying goodbye (killed or crashed?)",
                   context_.world_rank, p.rank, p.pid));
}

bool ShmTransport::push_hello(Peer& p) {
  const int me = context_.world_rank;
  if (p.outgoing < 0) {
    Fd s(::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (s.fd < 0) throw MpiError(MPI_ERR_OTHER, fmt::format("shm: rank {}: unix socket: {}", me, os_error(errno)));
    socklen_t length = 0;
    sockaddr_un a = abstract_address(socket_name_of(uid_, context_.job_cookie, p.rank, p.pid), &length);
    if (::connect(s.fd, reinterpret_cast<sockaddr*>(&a), length) != 0) {
      if (errno == EAGAIN || errno == EINTR) return false;  // its backlog is full: later
      if (errno == ECONNREFUSED) {
        // Gone already (an early MPI_Abort, say): mpirun reports the job's
        // end; sends to it keep saying would_block meanwhile.
        log().debug("shm: rank {}: local peer rank {} (pid {}) refused the connection; gone?", me, p.rank, p.pid);
        return true;
      }
      throw MpiError(MPI_ERR_OTHER,
                     fmt::format("shm: rank {} cannot connect to local peer rank {} (pid {}): {} (is it alive? "
                                 "shm.enable=false or mpirun -nounix use tcp instead)",
                                 me, p.rank, p.pid, os_error(errno)));
    }
    p.outgoing = s.release();
  }
  Hello hello{hello_magic,
              protocol_version,
              context_.job_cookie,
              me,
              static_cast<std::int32_t>(pid_),
              options_.ring_size,
              segment_size_,
              reinterpret_cast<std::uintptr_t>(&probe_value_),
              probe_value_};
  iovec iov{&hello, sizeof hello};
  alignas(cmsghdr) char control[CMSG_SPACE(2 * sizeof(int))]{};
  msghdr m{};
  m.msg_iov = &iov;
  m.msg_iovlen = 1;
  m.msg_control = control;
  m.msg_controllen = sizeof control;
  cmsghdr* c = CMSG_FIRSTHDR(&m);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(2 * sizeof(int));
  int fds[2] = {segment_fd_, doorbell_fd_};
  std::memcpy(CMSG_DATA(c), fds, sizeof fds);
  if (::sendmsg(p.outgoing, &m, MSG_DONTWAIT | MSG_NOSIGNAL) < 0) {
    if (errno == EAGAIN || errno == EINTR) return false;
    throw MpiError(MPI_ERR_OTHER, fmt::format("shm: rank {} cannot send its hello to local peer rank {} (pid {}): {}",
                                              me, p.rank, p.pid, os_error(errno)));
  }
  p.hello_sent = true;
  return true;
}

// ---- wire-up ------------------------------------------------------------------

Capabilities ShmTransport::capabilities() const {
  Capabilities caps;
  caps.eager_limit = options_.eager_limit;
  caps.max_fragment = max_fragment;
  caps.latency_us = declared_latency_us;
  caps.bandwidth_bytes_per_s = declared_bandwidth;
  caps.can_block = true;  // the doorbell is an eventfd in the shared io_context
  caps.polled = true;     // messages are found in the rings, not by epoll
  // IS class A on 4 processes: 1.2-2.4x slower with its long messages
  // through the ring on credits (request/README.md).
  caps.eager_credits = false;
  caps.copies_up_to = options_.eager_limit;  // eager payloads are written into the ring
  return caps;
}

bool ShmTransport::reachable(int peer) const {
  return peer >= 0 && peer < context_.world_size && peers_[static_cast<std::size_t>(peer)] != nullptr;
}

std::string ShmTransport::endpoint() { return fmt::format("shm:{}:{}:{}", host_key_, uid_, pid_); }

void ShmTransport::set_peer_endpoint(int peer, std::string_view endpoint) {
  if (peer < 0 || peer >= context_.world_size || peer == context_.world_rank) return;
  // "shm:<host key>:<uid>:<pid>"
  std::vector<std::string_view> fields;
  std::string_view rest = endpoint;
  while (true) {
    auto colon = rest.find(':');
    fields.push_back(rest.substr(0, colon));
    if (colon == std::string_view::npos) break;
    rest = rest.substr(colon + 1);
  }
  if (fields.size() != 4 || fields[0] != "shm")
    throw MpiError(MPI_ERR_OTHER, fmt::format("shm: rank {}: malformed endpoint '{}' of rank {}", context_.world_rank,
                                              endpoint, peer));
  long pid = 0;
  unsigned uid = 0;
  try {
    uid = static_cast<unsigned>(std::stoul(std::string(fields[2])));
    pid = std::stol(std::string(fields[3]));
  } catch (...) {
    throw MpiError(MPI_ERR_OTHER, fmt::format("shm: rank {}: malformed endpoint '{}' of rank {}", context_.world_rank,
                                              endpoint, peer));
  }
  // Another host, or another user (whose memory we could not read anyway): tcp.
  if (fields[1] != host_key_ || uid != uid_ || peers_[static_cast<std::size_t>(peer)]) return;
  auto p = std::make_unique<Peer>();
  p->rank = peer;
  p->pid = static_cast<pid_t>(pid);
  void* block = map_shared(segment_fd_, pair_stride_, page_size + static_cast<std::size_t>(peer) * pair_stride_);
  if (!block)
    throw MpiError(MPI_ERR_OTHER, fmt::format("shm: rank {}: cannot map the ring from rank {}: {}", context_.world_rank,
                                              peer, os_error(errno)));
  p->rx_map = block;
  p->rx_control = new (block) RingControl;
  p->reader = RingReader(RingView{p->rx_control, static_cast<std::byte*>(block) + page_size,
                                  options_.ring_size / cache_line});
  Peer& ref = *p;
  peers_[static_cast<std::size_t>(peer)] = std::move(p);
  ref.receiver_index = receivers_.size();
  receivers_.push_back(&ref);
  watch_.push_back({ref.reader.head_stamp(), ref.reader.ready_stamp()});
  if (!push_hello(ref)) pending_hellos_.push_back(&ref);
  log().debug("shm: rank {}: rank {} (pid {}) is on this host", context_.world_rank, peer, pid);
}

SingleCopy ShmTransport::large_path_from(int peer) const {
  if (!reachable(peer)) return SingleCopy::unknown;
  return static_cast<SingleCopy>(peers_[static_cast<std::size_t>(peer)]->rx_control->single_copy.load());
}

// ---- sending ------------------------------------------------------------------

void ShmTransport::ring(Peer& p) {
  if (p.doorbell < 0) {
    p.wake_owed = true;
    return;
  }
  const std::uint64_t one = 1;
  // EAGAIN (the counter is full) means it is rung already.
  [[maybe_unused]] ssize_t n = ::write(p.doorbell, &one, sizeof one);
}

void ShmTransport::ring_self() {
  const std::uint64_t one = 1;
  [[maybe_unused]] ssize_t n = ::write(doorbell_fd_, &one, sizeof one);
}

void ShmTransport::notify(Peer& p) {
  // Pairs with arm(): our record (or ack) is stored before we look at the
  // flag, its flag before it looks at its rings; with the fences one of the
  // two sees the other, so a wake-up is never lost.  No system call unless
  // the peer said it may sleep.
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (!p.tx_header) {
    p.wake_owed = true;
    return;
  }
  if (p.tx_header->asleep.load(std::memory_order_relaxed) != 0 &&
      p.tx_header->asleep.exchange(0, std::memory_order_seq_cst) != 0)
    ring(p);
}

void ShmTransport::add_sender(Peer& p) {
  if (p.listed_sender) return;
  p.listed_sender = true;
  senders_.push_back(&p);
}

SendStatus ShmTransport::send(int peer, const Frame& frame, std::span<const std::byte> payload,
                              std::uint64_t token) {
  if (failure_) std::rethrow_exception(failure_);
  // reachable(), with one comparison for the range (on every message's path)
  Peer* const reached = static_cast<unsigned>(peer) < static_cast<unsigned>(context_.world_size)
                            ? peers_[static_cast<std::size_t>(peer)].get()
                            : nullptr;
  if (!reached) [[unlikely]]
    throw MpiError(MPI_ERR_INTERN, fmt::format("shm: rank {} cannot reach rank {}", context_.world_rank, peer));
  Peer& p = *reached;
  // Not wired yet (its hello is on the way), or the parts of a streamed
  // payload go first: the engine keeps the frame and retries.
  if (!p.writer.attached() || p.tx_streaming) return SendStatus::would_block;
  if (!p.tx_populated) {
    populate(p.tx_map, p.tx_map_size);
    p.tx_populated = true;
  }
  frame::HeaderBuffer buffer;
  const std::span<const std::byte> header = frame::encoded(frame, buffer);
  if (payload.size() > options_.eager_limit) return send_large(p, header, payload, token);
  if (!p.writer.write(RecordKind::message, header, {}, payload)) return SendStatus::would_block;
  notify(p);
  return SendStatus::complete;
}

SendStatus ShmTransport::send_large(Peer& p, std::span<const std::byte> header, std::span<const std::byte> payload,
                                    std::uint64_t token) {
  auto decision = static_cast<SingleCopy>(p.tx_control->single_copy.load(std::memory_order_acquire));
  if (decision == SingleCopy::permitted) {
    const std::uint64_t extras[2] = {payload.size(), reinterpret_cast<std::uintptr_t>(payload.data())};
    if (!p.writer.write(RecordKind::single_copy, header, extras, {})) return SendStatus::would_block;
    p.single_copy_tokens.push_back(token);
    add_sender(p);
    notify(p);
    return SendStatus::in_flight;
  }
  // Two copies: the first part travels with the header, the rest follows in
  // parts as the receiver frees lines (continue_stream, from progress()).
  const std::uint64_t extras[1] = {payload.size()};
  std::size_t room = p.writer.max_record() - record_bytes(header.size(), 1, 0);
  std::size_t first = std::min(payload.size(), room);
  if (!p.writer.write(RecordKind::stream_begin, header, extras, payload.first(first))) return SendStatus::would_block;
  p.tx_payload = payload;
  p.tx_offset = first;
  p.tx_token = token;
  p.tx_streaming = first < payload.size();
  if (p.tx_streaming) continue_stream(p);
  notify(p);
  if (!p.tx_streaming) return SendStatus::complete;
  add_sender(p);
  return SendStatus::in_flight;
}

bool ShmTransport::continue_stream(Peer& p) {
  bool wrote = false;
  const std::size_t part = p.writer.max_record() - record_bytes(0, 0, 0);
  while (p.tx_offset < p.tx_payload.size()) {
    std::size_t n = std::min(part, p.tx_payload.size() - p.tx_offset);
    if (!p.writer.write(RecordKind::stream_chunk, {}, {}, p.tx_payload.subspan(p.tx_offset, n))) break;
    p.tx_offset += n;
    wrote = true;
  }
  if (p.tx_offset == p.tx_payload.size()) p.tx_streaming = false;
  return wrote;
}

bool ShmTransport::progress_sends() {
  bool worked = false;
  // Upcalls may send, and so add to senders_: index, not iterators.
  for (std::size_t i = 0; i < senders_.size(); ++i) {
    Peer& p = *senders_[i];
    if (!p.single_copy_tokens.empty()) {
      const std::uint64_t acked = p.tx_control->acked.load(std::memory_order_acquire);
      while (p.single_copy_done < acked && !p.single_copy_tokens.empty()) {
        std::uint64_t token = p.single_copy_tokens.front();
        p.single_copy_tokens.pop_front();
        ++p.single_copy_done;
        worked = true;
        context_.sink->on_send_complete(p.rank, token);
      }
    }
    if (p.tx_streaming && continue_stream(p)) {
      worked = true;
      notify(p);
      if (!p.tx_streaming) context_.sink->on_send_complete(p.rank, p.tx_token);
    }
  }
  std::erase_if(senders_, [](Peer* p) {
    bool busy = p->tx_streaming || !p->single_copy_tokens.empty();
    if (!busy) p->listed_sender = false;
    return !busy;
  });
  return worked;
}

// ---- receiving ------------------------------------------------------------------

void ShmTransport::publish(Peer& p) {
  if (p.reader.publish()) ring(p);  // it waits for room
}

void ShmTransport::read_from_peer(Peer& p, std::span<std::byte> target, std::uint64_t address) {
  std::size_t done = 0;
  while (done < target.size()) {
    iovec local{target.data() + done, target.size() - done};
    iovec remote{reinterpret_cast<void*>(static_cast<std::uintptr_t>(address + done)), target.size() - done};
    ssize_t n = ::process_vm_readv(p.pid, &local, 1, &remote, 1, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      int error = n < 0 ? errno : EIO;
      throw MpiError(MPI_ERR_OTHER,
                     fmt::format("shm: rank {} cannot read a message of {} bytes from local peer rank {} (pid {}): {}{}",
                                 context_.world_rank, target.size(), p.rank, p.pid, os_error(error),
                                 error == ESRCH ? " (the peer is gone)" : ""));
    }
    done += static_cast<std::size_t>(n);
  }
}

void ShmTransport::deliver_end(Peer& p) {
  p.rx_streaming = false;
  std::span<const std::byte> payload = p.rx_target;
  p.rx_target = {};
  context_.sink->on_frame_end(p.rank, p.rx_token, payload);
  if (p.rx_buffer.capacity() > 2 * max_kept_buffer) {
    p.rx_buffer.clear();
    p.rx_buffer.shrink_to_fit();
  }
}

bool ShmTransport::drain(Peer& p) {
  if (!p.rx_populated) {
    populate(p.rx_map, page_size + p.reader.capacity() * cache_line);
    p.rx_populated = true;
  }
  // The head moves (also on a throw from an upcall): progress() must keep
  // polling the line after it, and give the consumed lines back (a sender
  // waiting for room would wait for ever).
  struct Rewatch {
    ShmTransport& t;
    Peer& p;
    bool returned = false;  // drain returned (false: an upcall threw)
    ~Rewatch() {
      t.watch_[p.receiver_index] = {p.reader.head_stamp(), p.reader.ready_stamp()};
      if (!returned && p.reader.unpublished() > 0 && !p.listed_publish) {
        try {
          t.to_publish_.push_back(&p);
          p.listed_publish = true;
        } catch (...) {
          // Out of memory: the next drain of this peer lists it.
        }
      }
    }
  } rewatch{*this, p};
  Record r;
  int budget = records_per_round;
  bool worked = false;
  FrameSink& sink = *context_.sink;
  auto target_for = [&](const Placement& placement, std::size_t size) -> std::span<std::byte> {
    if (!placement.destination.empty()) {
      if (placement.destination.size() != size)
        throw MpiError(MPI_ERR_INTERN, "shm: the request layer named a destination of the wrong size");
      return placement.destination;
    }
    p.rx_buffer.resize(size);
    return p.rx_buffer;
  };
  // written() first: one load, where peek() is a call that decodes the
  // prefix (after the last record of a round, on the path of the wait that
  // record completed).
  while (budget-- > 0 && p.reader.written() && p.reader.peek(&r)) {
    worked = true;
    if (p.rx_streaming != (r.kind == RecordKind::stream_chunk))
      throw MpiError(MPI_ERR_INTERN, fmt::format("shm: rank {}: record {} from rank {} out of place",
                                                 context_.world_rank, static_cast<int>(r.kind), p.rank));
    // Consumed before its upcalls (its lines stay ours until publish()): an
    // upcall that throws must not leave it to be delivered a second time.
    p.reader.consume(r);
    switch (r.kind) {
      case RecordKind::message:
        sink.on_frame(p.rank, frame::decode(r.header), r.data);
        break;
      case RecordKind::single_copy: {
        const std::size_t size = r.extra(0);
        Placement placement = sink.on_frame_begin(p.rank, frame::decode(r.header), size);
        std::span<std::byte> d = target_for(placement, size);
        read_from_peer(p, d, r.extra(1));
        // The sender may reuse its buffer now.
        p.rx_control->acked.store(++p.acked, std::memory_order_seq_cst);
        notify(p);
        p.rx_target = d;
        p.rx_token = placement.token;
        deliver_end(p);
        break;
      }
      case RecordKind::stream_begin: {
        const std::size_t size = r.extra(0);
        Placement placement = sink.on_frame_begin(p.rank, frame::decode(r.header), size);
        std::span<std::byte> d = target_for(placement, size);
        if (r.data.size() > size) throw MpiError(MPI_ERR_INTERN, "shm: streamed part beyond its payload");
        if (!r.data.empty()) std::memcpy(d.data(), r.data.data(), r.data.size());
        p.rx_target = d;
        p.rx_filled = r.data.size();
        p.rx_token = placement.token;
        p.rx_streaming = true;
        if (p.rx_filled == d.size()) deliver_end(p);
        break;
      }
      case RecordKind::stream_chunk: {
        if (r.data.size() > p.rx_target.size() - p.rx_filled)
          throw MpiError(MPI_ERR_INTERN, "shm: streamed part beyond its payload");
        std::memcpy(p.rx_target.data() + p.rx_filled, r.data.data(), r.data.size());
        p.rx_filled += r.data.size();
        if (p.rx_filled == p.rx_target.size()) deliver_end(p);
        break;
      }
      case RecordKind::padding: break;  // peek() skips it
    }
    // Give lines back early while a large payload streams in.
    if (p.reader.unpublished() >= p.reader.capacity() / 4) publish(p);
  }
  if (p.reader.unpublished() > 0) {
    if (context_.progress == ProgressMode::thread) {
      publish(p);
    } else if (!p.listed_publish) {
      // Poll mode: at the start of the next progress().  Publishing is a
      // sequentially consistent store, which waits for every store before
      // it (the stamps just zeroed, the control line); here it would delay
      // the waiter that this drain completed, and its answer.
      p.listed_publish = true;
      to_publish_.push_back(&p);
    }
  }
  rewatch.returned = true;
  return worked;
}

bool ShmTransport::anything_pending() {
  for (Peer* p : receivers_)
    if (p->reader.ready()) return true;
  for (Peer* p : senders_)
    if (!p->single_copy_tokens.empty() &&
        p->tx_control->acked.load(std::memory_order_acquire) > p->single_copy_done)
      return true;
  return false;
}

bool ShmTransport::arm() {
  header_->asleep.store(1, std::memory_order_seq_cst);
  std::atomic_thread_fence(std::memory_order_seq_cst);
  // Records published before the flag was visible rang no doorbell.
  return anything_pending();
}

// Inline: the fast path of progress() calls it in every round.
[[gnu::always_inline]] inline bool ShmTransport::drain_ready() {
  bool worked = false;
  for (std::size_t i = 0; i < watch_.size(); ++i)
    if (std::atomic_ref<std::uint64_t>(*watch_[i].stamp).load(std::memory_order_acquire) == watch_[i].ready)
      worked = drain(*receivers_[i]) || worked;
  return worked;
}

bool ShmTransport::progress() {
  // The round of a poll-mode waiter that finds nothing (most of them): one
  // load per peer, then the idle bookkeeping, without the full round's
  // set-up; the time between two looks at a ring is a message's latency.
  // The round that finds a record drains it from here too: what
  // full_progress() would do first has nothing to do in this state, and
  // this round ends the wait the record completes.
  if (!failure_ && context_.progress == ProgressMode::poll && pending_hellos_.empty() && to_publish_.empty() &&
      senders_.empty()) {
    if (!drain_ready()) return idle_round();
    idle_polls_ = 0;
    reading_ = false;
    return true;
  }
  return full_progress();
}

bool ShmTransport::full_progress() {
  if (failure_) std::rethrow_exception(failure_);
  bool worked = false;
  if (!pending_hellos_.empty()) {
    std::erase_if(pending_hellos_, [&](Peer* p) { return push_hello(*p); });
  }
  if (!to_publish_.empty()) {
    for (Peer* p : to_publish_) {
      p->listed_publish = false;
      publish(*p);
    }
    to_publish_.clear();
  }
  if (!senders_.empty()) worked = progress_sends() || worked;
  worked = drain_ready() || worked;
  if (context_.progress == ProgressMode::thread) {
    // The progress thread sleeps in epoll as soon as this round ends: the
    // doorbell must be armed, unless an application thread polls (it arms
    // it before it sleeps).
    if (context_.gate && context_.gate->application_polling()) return worked;
    if (arm()) ring_self();
    return worked;
  }
  if (worked) {
    idle_polls_ = 0;
    reading_ = false;
    return true;
  }
  // A single-copy send is being read: the receiver answered the rts and is
  // copying now, its ack comes within the copy time.  For up to
  // reading_spin that counts as activity, so that the engine keeps spinning
  // instead of sleeping in epoll after progress.spin, and the ack does not
  // have to wake us through the doorbell (a wake-up here costs tens of
  // microseconds, on the path of every large message).  Bounded, because
  // with more ranks than cores the reader may need this core; not at all
  // when the engine yields (the host is oversubscribed: spinning would only
  // delay the reader).
  if (!senders_.empty() && !context_.yield_when_idle) {
    bool outstanding = false;
    for (const Peer* p : senders_) outstanding = outstanding || !p->single_copy_tokens.empty();
    if (outstanding) {
      const auto now = std::chrono::steady_clock::now();
      if (!reading_) {
        reading_ = true;
        reading_since_ = now;
      }
      if (now - reading_since_ < reading_spin) return true;
    } else {
      reading_ = false;
    }
  }
  return idle_round();
}

bool ShmTransport::idle_round() {
  // Poll mode: the engine spins a while before it sleeps.  Senders ring only
  // once we have been idle for half that spin (a busy ping-pong never makes
  // a system call); the flag stays set until a sender clears it.
  if (header_->asleep.load(std::memory_order_relaxed) != 0) return false;
  if (options_.arm_after.count() > 0) {
    // The clock is read on every 8th idle round only, the first time at the
    // 8th: most waits of a busy exchange end sooner, and a clock read
    // costs as much as a round.
    if ((++idle_polls_ & 7) != 0) return false;
    if (idle_polls_ == 8) {
      idle_since_ = std::chrono::steady_clock::now();
      return false;
    }
    if (std::chrono::steady_clock::now() - idle_since_ < options_.arm_after) return false;
  }
  idle_polls_ = 0;
  return arm();
}

// ---- shutdown -------------------------------------------------------------------

void ShmTransport::begin_shutdown() {
  if (shutting_down_) return;
  shutting_down_ = true;
  shutdown_deadline_ = std::chrono::steady_clock::now() + options_.shutdown_timeout;
  // Nothing of ours is in flight (the engine waited for that): a goodbye
  // tells each peer that our end of file, soon, is not a crash.
  for (auto& p : peers_)
    if (p && p->hello_sent) ::send(p->outgoing, &goodbye_byte, 1, MSG_DONTWAIT | MSG_NOSIGNAL);
}

bool ShmTransport::shutdown_complete() const {
  if (!shutting_down_) return false;
  if (failure_) return true;
  bool all = true;
  for (const auto& p : peers_)
    if (p && !p->goodbye_received && !p->closed) all = false;
  if (all) return true;
  if (std::chrono::steady_clock::now() >= shutdown_deadline_) {
    log().debug("shm: rank {}: not every local peer said goodbye within {} ms; closing anyway", context_.world_rank,
                options_.shutdown_timeout.count());
    return true;
  }
  return false;
}

void ShmTransport::fail(const std::string& message) {
  if (failure_) return;
  // Debug only: the error reaches the user through the MPI error handler.
  log().debug("{}", message);
  failure_ = std::make_exception_ptr(MpiError(MPI_ERR_OTHER, message));
}

}  // namespace gridmpi::p2p::shm
