// The MPI process's side of the control service: one blocking TCP
// connection to mpirun, opened in MPI_Init.
#include "boot/control_client.hpp"


#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <stdexcept>

#include "conf/registry.hpp"
#include "boot/control_protocol.hpp"
#include "base/net.hpp"

namespace gridmpi::boot {

namespace {

const conf::Param<std::int64_t> connect_timeout{
    "control.connect_timeout", 30, "seconds",
    "how long an MPI process keeps trying to reach mpirun's control service in MPI_Init",
    conf::Level::user, {"_YAMPI_MPIRUN_CONNECT_TIMEOUT"}};

std::string env_or_empty(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

long long env_integer(const char* name, long long min, long long max) {
  std::string text = env_or_empty(name);
  char* end = nullptr;
  errno = 0;
  long long v = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno != 0 || v < min || v > max)
    throw std::runtime_error("malformed " + std::string(name) + "='" + text +
                             "' in the environment (set by mpirun); start the program with gridmpi's mpirun");
  return v;
}

std::string this_host() {
  char name[256] = {};
  gethostname(name, sizeof name - 1);
  return name;
}

class TcpControlClient final : public ControlClient {
 public:
  TcpControlClient(UniqueFd fd, int rank, int size, std::uint64_t cookie)
      : fd_(std::move(fd)), rank_(rank), size_(size), cookie_(cookie), decoder_(std::size_t{1} << 30) {}

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::uint64_t job_cookie() const override { return cookie_; }

  void hello() {
    Message m;
    m.type = MessageType::hello;
    m.cookie = cookie_;
    m.rank = rank_;
    m.pid = static_cast<std::int32_t>(getpid());
    m.host = this_host();
    send(m);
    std::lock_guard read_lock(read_mutex_);
    auto reply = receive(std::chrono::seconds(60));
    if (!reply) throw std::runtime_error("mpirun did not answer this process's hello within 60 s");
    if (reply->type == MessageType::refuse)
      throw std::runtime_error("mpirun refused rank " + std::to_string(rank_) + ": " + reply->text +
                               " (was this process started by another mpirun?)");
    if (reply->type != MessageType::welcome || reply->size != size_)
      throw std::runtime_error("unexpected answer from mpirun to hello ('" +
                               std::string(message_type_name(reply->type)) + "')");
  }

  std::vector<std::string> exchange(const std::string& key, const std::string& value) override {
    return fence(key, value, false);
  }

  std::vector<std::string> exchange_with_agent(const std::string& key, const std::string& value) override {
    return fence(key, value, true);
  }

  bool abort(int exit_code, const std::string& message, bool error) override {
    Message m;
    m.type = MessageType::abort;
    m.code = exit_code;
    m.text = message;
    if (error) m.key = abort_key_error;
    try {
      send(m);
    } catch (const std::exception&) {
      return false;  // mpirun is gone: nobody to tell
    }
    // Another thread may be blocked reading (in exchange); then just give
    // mpirun a moment to act on the abort.
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    std::unique_lock read_lock(read_mutex_, std::defer_lock);
    if (!read_lock.try_lock_for(std::chrono::seconds(2))) return true;
    try {
      while (std::chrono::steady_clock::now() < deadline) {
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
        auto reply = receive(left);
        if (!reply || reply->type == MessageType::abort_ack) return true;
      }
    } catch (const std::exception&) {
      // Connection closed: mpirun got the message or is gone; either way done.
    }
    return true;
  }

  void finalize() override {
    Message m;
    m.type = MessageType::finalize;
    send(m);
    std::lock_guard read_lock(read_mutex_);
    for (;;) {
      auto reply = receive(std::chrono::seconds(60));
      if (!reply) throw std::runtime_error("mpirun did not acknowledge MPI_Finalize within 60 s");
      if (reply->type == MessageType::finalize_ack) return;
    }
  }

 private:
  // Publishes `value` for `key` and waits for mpirun's values (every rank's;
  // with `one_allowed` also a single answer of mpirun's own).
  std::vector<std::string> fence(const std::string& key, const std::string& value, bool one_allowed) {
    Message m;
    m.type = MessageType::put_fence;
    m.key = key;
    m.value = value;
    send(m);
    std::lock_guard read_lock(read_mutex_);
    for (;;) {
      auto reply = receive(std::nullopt);
      if (reply && reply->type == MessageType::values && reply->key == key) {
        bool agent_answer = one_allowed && reply->values.size() == 1;
        if (static_cast<int>(reply->values.size()) != size_ && !agent_answer)
          throw std::runtime_error("mpirun sent " + std::to_string(reply->values.size()) + " values for '" + key +
                                   "', expected " + std::to_string(size_));
        return std::move(reply->values);
      }
      if (reply && reply->type == MessageType::refuse)
        throw std::runtime_error("mpirun closed the control connection: " + reply->text);
    }
  }

  void send(const Message& m) {
    auto bytes = encode(m);
    std::lock_guard write_lock(write_mutex_);
    if (!net::write_all(fd_.get(), bytes))
      throw std::runtime_error("lost the control connection to mpirun (write: " + std::string(std::strerror(errno)) +
                               ")");
  }

  // Next message, or nothing when the timeout passes.  Throws when the
  // connection is closed or broken.  Caller holds read_mutex_.
  std::optional<Message> receive(std::optional<std::chrono::milliseconds> timeout) {
    auto deadline = std::chrono::steady_clock::now() + timeout.value_or(std::chrono::milliseconds(0));
    for (;;) {
      if (auto m = decoder_.next()) return m;
      int wait_ms = -1;
      if (timeout) {
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) return std::nullopt;
        wait_ms = static_cast<int>(left.count());
      }
      pollfd p{fd_.get(), POLLIN, 0};
      int ready = ::poll(&p, 1, wait_ms);
      if (ready < 0 && errno != EINTR) throw std::runtime_error("poll on the control connection: " +
                                                                std::string(std::strerror(errno)));
      if (ready <= 0) continue;
      std::byte buffer[65536];
      ssize_t n = ::recv(fd_.get(), buffer, sizeof buffer, 0);
      if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
      if (n < 0) throw std::runtime_error("lost the control connection to mpirun (read: " +
                                          std::string(std::strerror(errno)) + ")");
      if (n == 0) throw std::runtime_error("mpirun closed the control connection (the job is being stopped)");
      decoder_.feed(std::span(buffer, static_cast<std::size_t>(n)));
    }
  }

  UniqueFd fd_;
  int rank_;
  int size_;
  std::uint64_t cookie_;
  std::mutex write_mutex_;
  std::timed_mutex read_mutex_;
  FrameDecoder decoder_;
};

}  // namespace

std::unique_ptr<ControlClient> ControlClient::from_environment(std::optional<VendorPlace> vendor) {
  if (!std::getenv("_YAMPI_PHOST") || !std::getenv("_YAMPI_PPORT")) return nullptr;
  int size = static_cast<int>(env_integer("_YAMPI_NPROCS", 1, 1 << 30));
  int rank = 0;
  if (vendor) {
    // mpirun -vendor: one environment for all ranks; the rank is the
    // vendor's MPI_COMM_WORLD rank (boot/start.cpp opened the vendor first).
    if (vendor->size != size)
      throw std::runtime_error("the vendor MPI started " + std::to_string(vendor->size) +
                               " processes but mpirun expects " + std::to_string(size) +
                               " (_YAMPI_NPROCS): was the program started by another launcher? start it with "
                               "mpirun -vendor NAME -np N only");
    rank = vendor->rank;
  } else {
    rank = static_cast<int>(env_integer("_YAMPI_MYRANK", 0, size - 1));
  }
  int port = static_cast<int>(env_integer("_YAMPI_PPORT", 1, 65535));
  std::string cookie_text = env_or_empty("_YAMPI_PHASH");
  char* end = nullptr;
  errno = 0;
  std::uint64_t cookie = std::strtoull(cookie_text.c_str(), &end, 10);
  if (cookie_text.empty() || *end != '\0' || errno != 0)
    throw std::runtime_error("malformed _YAMPI_PHASH='" + cookie_text +
                             "' in the environment (set by mpirun); start the program with gridmpi's mpirun");
  std::string host = env_or_empty("_YAMPI_PHOST");
  std::int64_t seconds = connect_timeout.get();
  if (seconds <= 0) seconds = 30;
  UniqueFd fd;
  try {
    fd = net::connect_tcp(host, port, std::chrono::seconds(seconds));
  } catch (const std::exception& e) {
    throw std::runtime_error("rank " + std::to_string(rank) + " cannot reach mpirun's control service at " + host +
                             ":" + std::to_string(port) + ": " + e.what() +
                             "; is mpirun still running, and is that address reachable from " + this_host() + "?");
  }
  // The TCP transport advertises this address by default: it is the one this
  // host uses to reach mpirun, hence one the other hosts of the job can reach.
  std::string local = net::local_address(fd.get());
  if (!local.empty()) setenv("GRIDMPI_LOCAL_ADDRESS", local.c_str(), 0);
  auto client = std::make_unique<TcpControlClient>(std::move(fd), rank, size, cookie);
  client->hello();
  return client;
}

}  // namespace gridmpi::boot
