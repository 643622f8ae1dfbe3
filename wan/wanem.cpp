// gridmpi-wanem: a wide-area link emulated in user space, packet by packet.
//
// It opens one TUN device in each of two or more network namespaces (the
// "ends"), reads every IPv4 packet that an end routes into its device, looks
// up which end owns the destination address, and writes the packet into that
// end's device once its delay has passed, after an optional bandwidth cap
// (a serialising link with a drop-tail queue) and an optional random loss.
// TCP between the namespaces therefore sees the true round trip, whatever
// process or port opens the connection.  See README.md for the set-up
// (addresses and routes are the caller's; wan/wanlib.py does them).
//
//   gridmpi-wanem --end NETNS=CIDR[,CIDR...] --end NETNS=CIDR[,CIDR...] ...
//                 [--dev NAME] [--delay MS] [--delay-from A:B=MS ...]
//                 [--rate MBYTE_PER_S] [--nic-rate MBYTE_PER_S] [--queue BYTES]
//                 [--loss P] [--seed N]
//
// --rate caps each direction between two ends (a wide-area link per pair);
// --nic-rate gives every end one network interface of that speed, shared by
// all it sends and by all it receives, joined by a cut-through switch
// (a cluster: a node sending to k others shares its interface among them;
// k nodes sending to one share its interface).
//
// It prints "ready" on stdout once every device exists, and its counters on
// stderr when it gets SIGUSR1 and when it stops (SIGTERM, SIGINT).  The
// devices disappear with the process, which stops when its parent does.

#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <sched.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

constexpr std::size_t kMaxPacket = 65536;

struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::string errno_text(const std::string& what) { return what + ": " + std::strerror(errno); }

struct Subnet {
  std::uint32_t net = 0;   // host order
  std::uint32_t mask = 0;  // host order
};

struct End {
  std::string netns;
  std::vector<Subnet> subnets;
  int fd = -1;
  // --nic-rate: when the end's interface finishes sending / receiving what
  // it has already taken; whether its device is left unread until then.
  std::uint64_t send_free_ns = 0, receive_free_ns = 0;
  bool paused = false;
};

struct Packet {
  std::uint64_t due_ns = 0;
  std::uint32_t len = 0;
  unsigned char data[kMaxPacket];
};

// One direction between two ends: a FIFO in order of due time (the delay is
// constant per direction and the serialisation is in arrival order).
struct Direction {
  std::uint64_t delay_ns = 0;
  std::uint64_t link_free_ns = 0;  // when the emulated link finishes its current packet
  std::deque<Packet*> queue;
  std::uint64_t packets = 0, bytes = 0, lost = 0, overflowed = 0;
};

struct Options {
  std::vector<End> ends;
  std::string dev = "wan0";
  double delay_ms = 0;
  std::vector<std::string> delay_from;  // "A:B=MS"
  double rate = 0;                      // bytes per second per direction; 0 = no cap
  double nic_rate = 0;                  // bytes per second per end's interface; 0 = none
  std::uint64_t queue_bytes = 0;        // drop-tail limit of the capped link; 0 = rate x 100 ms
  double loss = 0;
  std::uint64_t seed = 1;
};

std::uint64_t now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000u + static_cast<std::uint64_t>(ts.tv_nsec);
}

double parse_number(const std::string& text, const std::string& what) {
  char* end = nullptr;
  errno = 0;
  double v = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || errno != 0 || v < 0)
    throw Error(what + " wants a non-negative number, not '" + text + "'");
  return v;
}

Subnet parse_subnet(const std::string& text) {
  auto slash = text.find('/');
  std::string addr = text.substr(0, slash);
  int bits = 32;
  if (slash != std::string::npos) {
    double b = parse_number(text.substr(slash + 1), "prefix length in '" + text + "'");
    if (b > 32 || b != static_cast<int>(b)) throw Error("bad prefix length in '" + text + "'");
    bits = static_cast<int>(b);
  }
  in_addr a{};
  if (inet_pton(AF_INET, addr.c_str(), &a) != 1) throw Error("'" + text + "' is not an IPv4 subnet (a.b.c.d/n)");
  Subnet s;
  s.mask = bits == 0 ? 0 : ~std::uint32_t{0} << (32 - bits);
  s.net = ntohl(a.s_addr) & s.mask;
  return s;
}

End parse_end(const std::string& text) {
  auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size())
    throw Error("--end wants NETNS=CIDR[,CIDR...], not '" + text + "'");
  End e;
  e.netns = text.substr(0, eq);
  std::string rest = text.substr(eq + 1);
  std::size_t pos = 0;
  while (pos <= rest.size()) {
    auto comma = rest.find(',', pos);
    std::string one = rest.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    e.subnets.push_back(parse_subnet(one));
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return e;
}

void usage(FILE* to) {
  std::fputs(
      "usage: gridmpi-wanem --end NETNS=CIDR[,CIDR...] --end NETNS=CIDR[,CIDR...] [...]\n"
      "                     [--dev NAME] [--delay MS] [--delay-from NETNS_A:NETNS_B=MS ...]\n"
      "                     [--rate MBYTE_PER_S] [--nic-rate MBYTE_PER_S] [--queue BYTES]\n"
      "                     [--loss P] [--seed N]\n"
      "Joins the named network namespaces through a TUN device each (NAME, default wan0),\n"
      "delaying every IPv4 packet by MS milliseconds per direction; --rate caps each\n"
      "direction, --nic-rate each end's interface (shared by its peers).  Prints 'ready' once\n"
      "the devices exist; counters go to stderr on SIGUSR1 and on exit.\n",
      to);
}

Options parse_options(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw Error(a + " needs a value");
      return argv[++i];
    };
    if (a == "--end") o.ends.push_back(parse_end(value()));
    else if (a == "--dev") o.dev = value();
    else if (a == "--delay") o.delay_ms = parse_number(value(), "--delay");
    else if (a == "--delay-from") o.delay_from.push_back(value());
    else if (a == "--rate") o.rate = parse_number(value(), "--rate") * 1e6;
    else if (a == "--nic-rate") o.nic_rate = parse_number(value(), "--nic-rate") * 1e6;
    else if (a == "--queue") o.queue_bytes = static_cast<std::uint64_t>(parse_number(value(), "--queue"));
    else if (a == "--loss") {
      o.loss = parse_number(value(), "--loss");
      if (o.loss >= 1) throw Error("--loss is a probability below 1");
    } else if (a == "--seed") o.seed = static_cast<std::uint64_t>(parse_number(value(), "--seed"));
    else if (a == "-h" || a == "--help") {
      usage(stdout);
      std::exit(0);
    } else
      throw Error("unknown argument '" + a + "' (see --help)");
  }
  if (o.ends.size() < 2) throw Error("give at least two --end NETNS=CIDR");
  if (o.dev.empty() || o.dev.size() >= IFNAMSIZ) throw Error("--dev: a device name of 1 to 15 characters");
  return o;
}

// Opens the TUN device NAME inside network namespace NETNS: the device is
// created where the opening thread's namespace is, and keeps working for
// this process after the thread returns to its own namespace.
int open_tun_in(const std::string& netns, const std::string& name) {
  int self = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
  if (self < 0) throw Error(errno_text("/proc/self/ns/net"));
  std::string path = "/var/run/netns/" + netns;
  int target = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (target < 0) {
    close(self);
    throw Error(errno_text("network namespace " + netns + " (" + path + ")"));
  }
  if (setns(target, CLONE_NEWNET) != 0) {
    close(self);
    close(target);
    throw Error(errno_text("setns into " + netns));
  }
  close(target);
  int fd = open("/dev/net/tun", O_RDWR | O_CLOEXEC | O_NONBLOCK);
  int saved = errno;
  ifreq ifr{};
  bool ok = fd >= 0;
  if (ok) {
    ifr.ifr_flags = IFF_TUN | IFF_NO_PI;
    std::strncpy(ifr.ifr_name, name.c_str(), IFNAMSIZ - 1);
    ok = ioctl(fd, TUNSETIFF, &ifr) == 0;
    saved = errno;
  }
  if (setns(self, CLONE_NEWNET) != 0) std::abort();  // cannot go on in the wrong namespace
  close(self);
  if (!ok) {
    if (fd >= 0) close(fd);
    errno = saved;
    throw Error(errno_text("TUN device " + name + " in " + netns));
  }
  return fd;
}

class Emulator {
 public:
  explicit Emulator(Options o) : opt_(std::move(o)), rng_(opt_.seed) {
    const std::size_t n = opt_.ends.size();
    dirs_.resize(n * n);
    for (auto& d : dirs_) d.delay_ns = static_cast<std::uint64_t>(opt_.delay_ms * 1e6);
    for (const auto& spec : opt_.delay_from) {
      auto colon = spec.find(':'), eq = spec.find('=');
      if (colon == std::string::npos || eq == std::string::npos || eq < colon)
        throw Error("--delay-from wants NETNS_A:NETNS_B=MS, not '" + spec + "'");
      int a = end_index(spec.substr(0, colon)), b = end_index(spec.substr(colon + 1, eq - colon - 1));
      if (a < 0 || b < 0 || a == b) throw Error("--delay-from '" + spec + "': name two different --end namespaces");
      dir(a, b).delay_ns = static_cast<std::uint64_t>(parse_number(spec.substr(eq + 1), "--delay-from") * 1e6);
    }
    const double fastest = opt_.rate > opt_.nic_rate ? opt_.rate : opt_.nic_rate;
    if (fastest > 0 && opt_.queue_bytes == 0) opt_.queue_bytes = static_cast<std::uint64_t>(fastest / 10);
    if (opt_.queue_bytes != 0 && opt_.queue_bytes < kMaxPacket) opt_.queue_bytes = kMaxPacket;
  }

  ~Emulator() {
    for (auto& e : opt_.ends)
      if (e.fd >= 0) close(e.fd);
    if (epoll_ >= 0) close(epoll_);
    if (timer_ >= 0) close(timer_);
    if (signals_ >= 0) close(signals_);
  }

  void open_devices() {
    for (auto& e : opt_.ends) e.fd = open_tun_in(e.netns, opt_.dev);
    epoll_ = epoll_create1(EPOLL_CLOEXEC);
    timer_ = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGHUP);
    sigaddset(&set, SIGUSR1);
    sigprocmask(SIG_BLOCK, &set, nullptr);
    signals_ = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
    if (epoll_ < 0 || timer_ < 0 || signals_ < 0) throw Error(errno_text("epoll/timerfd/signalfd"));
    for (std::size_t i = 0; i < opt_.ends.size(); ++i) watch(opt_.ends[i].fd, i);
    watch(timer_, kTimer);
    watch(signals_, kSignals);
  }

  void run() {
    epoll_event events[16];
    for (;;) {
      int n = epoll_wait(epoll_, events, 16, -1);
      if (n < 0) {
        if (errno == EINTR) continue;
        throw Error(errno_text("epoll_wait"));
      }
      for (int k = 0; k < n; ++k) {
        std::uint64_t tag = events[k].data.u64;
        if (tag == kSignals) {
          signalfd_siginfo si{};
          while (read(signals_, &si, sizeof si) == static_cast<ssize_t>(sizeof si)) {
            if (si.ssi_signo == SIGUSR1) report();
            else return;
          }
        } else if (tag == kTimer) {
          std::uint64_t expirations;
          while (read(timer_, &expirations, sizeof expirations) > 0) {
          }
        } else {
          drain(static_cast<std::size_t>(tag));
        }
      }
      release_due();
    }
  }

  void report() const {
    const std::size_t n = opt_.ends.size();
    for (std::size_t a = 0; a < n; ++a)
      for (std::size_t b = 0; b < n; ++b) {
        const Direction& d = dirs_[a * n + b];
        if (a == b || (d.packets == 0 && d.lost == 0 && d.overflowed == 0)) continue;
        std::fprintf(stderr, "gridmpi-wanem: %s -> %s: %llu packets, %llu bytes, %llu lost, %llu queue drops\n",
                     opt_.ends[a].netns.c_str(), opt_.ends[b].netns.c_str(),
                     static_cast<unsigned long long>(d.packets), static_cast<unsigned long long>(d.bytes),
                     static_cast<unsigned long long>(d.lost), static_cast<unsigned long long>(d.overflowed));
      }
    std::fprintf(stderr, "gridmpi-wanem: %llu packets with no end to go to (not IPv4, or no --end owns the address)\n",
                 static_cast<unsigned long long>(unroutable_));
    std::fflush(stderr);
  }

 private:
  static constexpr std::uint64_t kTimer = ~std::uint64_t{0};
  static constexpr std::uint64_t kSignals = ~std::uint64_t{0} - 1;
  // --nic-rate: an end's device is read while its interface has at most
  // this much left to send (keeps the interface busy between wake-ups).
  static constexpr std::uint64_t kSlackNs = 200000;

  Direction& dir(std::size_t from, std::size_t to) { return dirs_[from * opt_.ends.size() + to]; }

  int end_index(const std::string& netns) const {
    for (std::size_t i = 0; i < opt_.ends.size(); ++i)
      if (opt_.ends[i].netns == netns) return static_cast<int>(i);
    return -1;
  }

  void watch(int fd, std::uint64_t tag) {
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = tag;
    if (epoll_ctl(epoll_, EPOLL_CTL_ADD, fd, &ev) != 0) throw Error(errno_text("epoll_ctl"));
  }

  int owner(const unsigned char* packet, std::size_t len) const {
    if (len < 20 || (packet[0] >> 4) != 4) return -1;
    std::uint32_t dst;
    std::memcpy(&dst, packet + 16, 4);
    dst = ntohl(dst);
    for (std::size_t i = 0; i < opt_.ends.size(); ++i)
      for (const auto& s : opt_.ends[i].subnets)
        if ((dst & s.mask) == s.net) return static_cast<int>(i);
    return -1;
  }

  Packet* take() {
    if (free_.empty()) {
      pool_.push_back(std::make_unique<Packet>());
      return pool_.back().get();
    }
    Packet* p = free_.back();
    free_.pop_back();
    return p;
  }

  // Reads what end FROM has routed into its device (a bounded batch, so
  // that due packets of the other direction are not held back).
  void drain(std::size_t from) {
    for (int batch = 0; batch < 64; ++batch) {
      if (busy(from)) {
        // The interface is sending: what the end queues stays in its own
        // device queue, where its TCP sees it (small queues per flow, the
        // queueing discipline's order), as in front of a real interface.
        pause(from, true);
        return;
      }
      Packet* p = take();
      ssize_t got = read(opt_.ends[from].fd, p->data, kMaxPacket);
      if (got <= 0) {
        free_.push_back(p);
        if (got < 0 && errno != EAGAIN && errno != EINTR) throw Error(errno_text("read from " + opt_.ends[from].netns));
        return;
      }
      p->len = static_cast<std::uint32_t>(got);
      int to = owner(p->data, p->len);
      if (to < 0 || static_cast<std::size_t>(to) == from) {
        ++unroutable_;
        free_.push_back(p);
        continue;
      }
      Direction& d = dir(from, static_cast<std::size_t>(to));
      if (opt_.loss > 0 && std::uniform_real_distribution<double>(0, 1)(rng_) < opt_.loss) {
        ++d.lost;
        free_.push_back(p);
        continue;
      }
      std::uint64_t now = now_ns(), leaves = now;
      if (opt_.nic_rate > 0) {
        // The sender's interface, then the switch's port to the receiver.
        End& src = opt_.ends[from];
        End& dst = opt_.ends[static_cast<std::size_t>(to)];
        const std::uint64_t wire = static_cast<std::uint64_t>(p->len * 1e9 / opt_.nic_rate);
        const std::uint64_t begins = src.send_free_ns > now ? src.send_free_ns : now;
        const std::uint64_t sent = begins + wire;
        // Cut-through: the switch starts sending a packet on as soon as its
        // port to the receiver is free and the packet has begun to arrive
        // (store and forward cost a whole packet's time per hop: 0.18 ms
        // for 9000 bytes at 50 MB/s, which no real switch of that MTU has).
        std::uint64_t start = dst.receive_free_ns > begins ? dst.receive_free_ns : begins;
        // Bytes waiting at either interface ahead of this packet.
        double waiting = static_cast<double>(begins - now) * 1e-9 * opt_.nic_rate;
        double queued = static_cast<double>(start - begins) * 1e-9 * opt_.nic_rate;
        if (waiting + p->len > static_cast<double>(opt_.queue_bytes) ||
            queued + p->len > static_cast<double>(opt_.queue_bytes)) {
          ++d.overflowed;
          free_.push_back(p);
          continue;
        }
        src.send_free_ns = sent;
        dst.receive_free_ns = start + wire;  // never before `sent`: start >= begins
        leaves = dst.receive_free_ns;
      }
      if (opt_.rate > 0) {
        std::uint64_t start = d.link_free_ns > leaves ? d.link_free_ns : leaves;
        // Bytes still waiting for the link ahead of this packet.
        double waiting = static_cast<double>(start - leaves) * 1e-9 * opt_.rate;
        if (waiting + p->len > static_cast<double>(opt_.queue_bytes)) {
          ++d.overflowed;
          free_.push_back(p);
          continue;
        }
        leaves = start + static_cast<std::uint64_t>(p->len * 1e9 / opt_.rate);
        d.link_free_ns = leaves;
      }
      p->due_ns = leaves + d.delay_ns;
      if (d.queue.empty() && p->due_ns <= now) {
        deliver(from, static_cast<std::size_t>(to), p);
        continue;
      }
      d.queue.push_back(p);
    }
  }

  void deliver(std::size_t from, std::size_t to, Packet* p) {
    Direction& d = dir(from, to);
    ssize_t put = write(opt_.ends[to].fd, p->data, p->len);
    if (put == static_cast<ssize_t>(p->len)) {
      ++d.packets;
      d.bytes += p->len;
    } else {
      ++d.overflowed;  // the receiving stack refused it, as a full interface queue would
    }
    free_.push_back(p);
  }

  // --nic-rate: the end's interface has more than kSlackNs left to send.
  bool busy(std::size_t end) const {
    return opt_.nic_rate > 0 && opt_.ends[end].send_free_ns > now_ns() + kSlackNs;
  }

  void pause(std::size_t end, bool paused) {
    End& e = opt_.ends[end];
    if (e.paused == paused) return;
    epoll_event ev{};
    ev.events = paused ? 0u : static_cast<std::uint32_t>(EPOLLIN);
    ev.data.u64 = end;
    if (epoll_ctl(epoll_, EPOLL_CTL_MOD, e.fd, &ev) != 0) throw Error(errno_text("epoll_ctl"));
    e.paused = paused;
  }

  void release_due() {
    const std::size_t n = opt_.ends.size();
    std::uint64_t now = now_ns(), next = 0;
    for (std::size_t a = 0; a < n; ++a) {
      End& e = opt_.ends[a];
      if (!e.paused) continue;
      if (e.send_free_ns <= now + kSlackNs) pause(a, false);
      else if (next == 0 || e.send_free_ns - kSlackNs < next) next = e.send_free_ns - kSlackNs;
    }
    for (std::size_t a = 0; a < n; ++a)
      for (std::size_t b = 0; b < n; ++b) {
        Direction& d = dirs_[a * n + b];
        while (!d.queue.empty() && d.queue.front()->due_ns <= now) {
          Packet* p = d.queue.front();
          d.queue.pop_front();
          deliver(a, b, p);
        }
        if (!d.queue.empty() && (next == 0 || d.queue.front()->due_ns < next)) next = d.queue.front()->due_ns;
      }
    itimerspec when{};
    if (next != 0) {
      when.it_value.tv_sec = static_cast<time_t>(next / 1000000000u);
      when.it_value.tv_nsec = static_cast<long>(next % 1000000000u);
    }
    if (next != armed_) {
      timerfd_settime(timer_, TFD_TIMER_ABSTIME, &when, nullptr);
      armed_ = next;
    }
  }

  Options opt_;
  std::mt19937_64 rng_;
  std::vector<Direction> dirs_;
  std::vector<std::unique_ptr<Packet>> pool_;
  std::vector<Packet*> free_;
  std::uint64_t unroutable_ = 0, armed_ = 0;
  int epoll_ = -1, timer_ = -1, signals_ = -1;
};

}  // namespace

int main(int argc, char** argv) {
  // The emulator lives as long as whoever started it: a test killed by its
  // time limit takes the emulator (and so its devices) with it.
  pid_t parent = getppid();
  prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (getppid() != parent) return 1;
  try {
    Emulator emu(parse_options(argc, argv));
    emu.open_devices();
    std::printf("ready\n");
    std::fflush(stdout);
    emu.run();
    emu.report();
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gridmpi-wanem: %s\n", e.what());
    return 1;
  }
}
