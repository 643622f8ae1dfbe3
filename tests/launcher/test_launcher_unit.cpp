// mpirun's command line, rank placement, method choice, shell quoting and
// line forwarding, without starting anything.
#include <catch2/catch.hpp>

#include "launcher/options.hpp"
#include "launcher/output.hpp"
#include "launcher/scratch.hpp"
#include "rpim/method.hpp"
#include "rpim/placement.hpp"
#include "rpim/spawn.hpp"
#include "rpim/vendor.hpp"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

using namespace gridmpi;
using launcher::parse_mpirun_options;
using launcher::UsageError;

namespace {
std::string usage_error(std::vector<std::string> args) {
  try {
    parse_mpirun_options(args);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST_CASE("mpirun options: the GridMPI flags", "[launcher]") {
  auto o = parse_mpirun_options({"-np", "4", "-c", "hosts", "-dryrun", "-showrank", "-nounix", "./a.out", "-np", "x"});
  CHECK(o.np == 4);
  CHECK(o.hostfile == "hosts");
  CHECK(o.dryrun);
  CHECK(o.showrank);
  CHECK(o.nounix);
  // Everything after the program belongs to the program.
  CHECK(o.program == std::vector<std::string>{"./a.out", "-np", "x"});
  CHECK(parse_mpirun_options({"-machinefile", "m", "hostname"}).hostfile == "m");
  CHECK(parse_mpirun_options({"-n", "2", "--", "-weird-name"}).program == std::vector<std::string>{"-weird-name"});
  CHECK(parse_mpirun_options({"hostname"}).np == 0);
  CHECK(parse_mpirun_options({"-help"}).help);
}

TEST_CASE("mpirun options: errors are one 'cause; fix' line", "[launcher]") {
  CHECK_THAT(usage_error({"-frobnicate", "a.out"}), Catch::StartsWith("unknown option '-frobnicate'; "));
  CHECK_THAT(usage_error({"-np"}), Catch::StartsWith("option -np needs a process count; "));
  CHECK_THAT(usage_error({"-np", "zero", "a.out"}), Catch::StartsWith("-np needs a positive process count, got 'zero'"));
  CHECK_THAT(usage_error({"-np", "0", "a.out"}), Catch::Contains("got '0'"));
  CHECK_THAT(usage_error({"-np", "2"}), Catch::StartsWith("no program to run; "));
  CHECK_THAT(usage_error({"-c"}), Catch::StartsWith("option -c needs a host file name"));
  CHECK_THAT(usage_error({"-client", "40", "10.0.0.1:4000", "a.out"}), Catch::Contains("0..31"));
  CHECK_THAT(usage_error({"-client", "-1", "10.0.0.1:4000", "a.out"}), Catch::Contains("0..31"));
  CHECK_THAT(usage_error({"-client", "x", "10.0.0.1:4000", "a.out"}), Catch::Contains("got 'x'"));
  CHECK_THAT(usage_error({"-client", "0", "nocolon", "a.out"}), Catch::Contains("ADDR:PORT"));
  CHECK_THAT(usage_error({"-client", "0", ":4000", "a.out"}), Catch::Contains("ADDR:PORT"));
  for (const char* bad : {"h:0", "h:65536", "h:x", "h:-4", "h:4x"})
    CHECK_THAT(usage_error({"-client", "0", bad, "a.out"}), Catch::Contains("port 1..65535"));
  CHECK_THAT(usage_error({"-tv", "a.out"}), Catch::Contains("not supported by gridmpi"));
  for (auto args : std::vector<std::vector<std::string>>{{"-x"}, {"-np"}, {"-np", "-1", "a"}, {"-client", "0"}}) {
    std::string e = usage_error(args);
    CHECK(e.find(';') != std::string::npos);
    CHECK(e.find('\n') == std::string::npos);
  }
}

TEST_CASE("mpirun options: -client K ADDR:PORT", "[launcher]") {
  auto o = parse_mpirun_options({"-client", "3", "10.1.2.3:4000", "-np", "2", "a.out"});
  CHECK(o.client == 3);
  CHECK(o.server_host == "10.1.2.3");
  CHECK(o.server_port == 4000);
  CHECK(o.np == 2);
  CHECK(parse_mpirun_options({"a.out"}).client == -1);
  CHECK(parse_mpirun_options({"-client", "31", "server.example:65535", "a.out"}).server_host == "server.example");
}

TEST_CASE("placement fills each host's slots top-down, then wraps", "[rpim]") {
  std::vector<conf::HostEntry> hosts = {{"a", 2, 1}, {"b", 1, 2}, {"c", 3, 3}};
  CHECK(rpim::total_slots(hosts) == 6);
  CHECK(rpim::assign_ranks(hosts, 4) == std::vector<std::string>{"a", "a", "b", "c"});
  CHECK(rpim::assign_ranks(hosts, 8) == std::vector<std::string>{"a", "a", "b", "c", "c", "c", "a", "a"});
  CHECK(rpim::assign_ranks({}, 3) == std::vector<std::string>{"localhost", "localhost", "localhost"});
}

TEST_CASE("local hosts are recognised", "[rpim]") {
  CHECK(rpim::is_local_host("localhost"));
  CHECK(rpim::is_local_host("127.0.0.1"));
  CHECK(rpim::is_local_host("127.1.2.3"));
  char name[256] = {};
  gethostname(name, sizeof name - 1);
  CHECK(rpim::is_local_host(name));
  CHECK_FALSE(rpim::is_local_host("node-that-does-not-exist.invalid"));
  CHECK_FALSE(rpim::is_local_host("192.0.2.254"));
}

TEST_CASE("method choice: fork locally, the remote shell elsewhere, '#' forks everywhere", "[rpim]") {
  CHECK(rpim::choose_method("", true).kind == rpim::Kind::fork);
  auto m = rpim::choose_method("", false);
  CHECK(m.kind == rpim::Kind::remote_shell);
  CHECK(m.shell == std::vector<std::string>{"ssh", "-x", "-o", "BatchMode=yes"});
  CHECK(rpim::choose_method("#", false).kind == rpim::Kind::fork);
  CHECK(rpim::choose_method(" # ", false).kind == rpim::Kind::fork);
  auto rsh = rpim::choose_method("rsh -l 'my user'", false);
  CHECK(rsh.shell == std::vector<std::string>{"rsh", "-l", "my user"});
  CHECK(rsh.name() == "rsh");
  CHECK_THROWS(rpim::split_words("ssh -o 'unbalanced"));
}

TEST_CASE("remote command lines survive the remote login shell", "[rpim]") {
  CHECK(rpim::shell_quote("plain/path-1.x") == "plain/path-1.x");
  CHECK(rpim::shell_quote("two words") == "'two words'");
  CHECK(rpim::shell_quote("it's") == "'it'\\''s'");
  CHECK(rpim::shell_quote("") == "''");
  auto argv = rpim::remote_shell_argv(rpim::choose_method("ssh -p 2222", false), "node1",
                                      {"/opt/g/bin/gridmpi-proxy", "--env", "A=b c", "--", "prog", "$HOME"});
  REQUIRE(argv.size() == 5);
  CHECK(argv[3] == "node1");
  CHECK(argv[4] == "/opt/g/bin/gridmpi-proxy --env 'A=b c' -- prog '$HOME'");
}

TEST_CASE("output goes out in whole lines, with the rank prefix", "[launcher]") {
  launcher::LineBuffer lines("[3] ");
  CHECK(lines.feed("hel").empty());
  CHECK(lines.feed("lo\nwor") == "[3] hello\n");
  CHECK(lines.feed("ld\n\nx") == "[3] world\n[3] \n");
  CHECK(lines.finish(true) == "[3] x\n");
  CHECK(lines.finish(true).empty());
  launcher::LineBuffer plain("");
  CHECK(plain.feed("no newline").empty());
  CHECK(plain.finish(false) == "no newline");
  launcher::LineBuffer small("", 4);
  CHECK(small.feed("abcdefghij\n") == "abcdefghij\n");  // a whole line goes out whole
  CHECK(small.feed("abcdef") == "abcd\n");  // an unterminated one is cut at max_line
  CHECK(small.feed("g\n") == "efg\n");
}

TEST_CASE("spawn reports exec and chdir failures before returning", "[rpim]") {
  rpim::SpawnRequest r;
  r.argv = {"/nonexistent/program"};
  r.env = rpim::environment_with({});
  CHECK_THROWS_WITH(rpim::spawn(r), Catch::Contains("cannot execute '/nonexistent/program'") &&
                                        Catch::Contains("No such file or directory"));
  r.argv = {"true"};
  r.cwd = "/nonexistent/dir";
  CHECK_THROWS_WITH(rpim::spawn(r), Catch::Contains("cannot change to directory '/nonexistent/dir'"));
}

TEST_CASE("spawn passes the environment and captures output", "[rpim]") {
  rpim::SpawnRequest r;
  r.argv = {"sh", "-c", "echo $GRIDMPI_SPAWN_TEST; echo err >&2; cut -d' ' -f5 /proc/$$/stat"};
  r.env = rpim::environment_with({"GRIDMPI_SPAWN_TEST=value 1"});
  auto p = rpim::spawn(r);
  char buffer[64] = {};
  int status = 0;
  waitpid(p.pid, &status, 0);
  ssize_t n = read(p.stdout_fd.get(), buffer, sizeof buffer - 1);
  // The child runs in its own process group (pgid == its pid).
  CHECK(std::string(buffer, n > 0 ? static_cast<std::size_t>(n) : 0) ==
        "value 1\n" + std::to_string(p.pid) + "\n");
  n = read(p.stderr_fd.get(), buffer, sizeof buffer - 1);
  CHECK(std::string(buffer, n > 0 ? static_cast<std::size_t>(n) : 0) == "err\n");
  CHECK(WIFEXITED(status));
}

TEST_CASE("mpirun options: -vendor and -progress", "[launcher]") {
  auto o = parse_mpirun_options({"-vendor", "ompi", "-progress", "thread", "-np", "2", "./a.out"});
  CHECK(o.vendor == "ompi");
  CHECK(o.progress == "thread");
  CHECK(o.np == 2);
  CHECK(usage_error({"-vendor"}).find("-vendor needs a vendor MPI name") != std::string::npos);
  CHECK(usage_error({"-progress", "fast", "./a.out"}).find("-progress needs poll or thread, got 'fast'") !=
        std::string::npos);
}

TEST_CASE("vendor names, aliases and site-defined vendors", "[rpim]") {
  CHECK(rpim::canonical_vendor_name("OMPI") == "openmpi");
  CHECK(rpim::canonical_vendor_name("mpich2") == "mpich");
  CHECK(rpim::canonical_vendor_name("hydra") == "mpich");
  CHECK(rpim::canonical_vendor_name("none").empty());
  CHECK(rpim::resolve_vendor({}, "/r").name.empty());

  rpim::VendorSettings s;
  s.name = "openmpi";
  auto spec = rpim::resolve_vendor(s, "/opt/g");
  CHECK(spec.mpiexec == std::vector<std::string>{"mpiexec.openmpi"});
  CHECK(spec.plugin == "/opt/g/lib/gridmpi/vendor/libgridmpi-vendor-openmpi.so");
  CHECK(spec.rank_env == "OMPI_COMM_WORLD_RANK");
  CHECK(spec.style == rpim::VendorStyle::openmpi);

  s.name = "intelmpi";
  CHECK_THROWS_WITH(rpim::resolve_vendor(s, "/opt/g"), Catch::Contains("unknown vendor MPI 'intelmpi'"));
  s.mpiexec = "/opt/intel/bin/mpiexec -bootstrap 'ssh -x'";
  s.style = "hydra";
  spec = rpim::resolve_vendor(s, "/opt/g");
  CHECK(spec.mpiexec == std::vector<std::string>{"/opt/intel/bin/mpiexec", "-bootstrap", "ssh -x"});
  CHECK(spec.style == rpim::VendorStyle::mpich);
  CHECK(spec.rank_env == "PMI_RANK");
  CHECK(spec.plugin == "/opt/g/lib/gridmpi/vendor/libgridmpi-vendor-intelmpi.so");
  s.style = "lam";
  CHECK_THROWS_WITH(rpim::resolve_vendor(s, "/opt/g"), Catch::Contains("vendor.style must be openmpi or mpich"));
  s.style = "mpich";
  s.name = "bad/name";
  CHECK_THROWS_WITH(rpim::resolve_vendor(s, "/opt/g"), Catch::Contains("has characters other than"));
}

TEST_CASE("host files in the vendor's form", "[rpim]") {
  std::vector<conf::HostEntry> hosts{{"a", 2, 1}, {"b", 1, 2}, {"a", 3, 3}, {"fe80::1", 1, 4}};
  // Open MPI refuses a host named twice with slots: summed, first appearance order.
  CHECK(rpim::vendor_hostfile_text(rpim::VendorStyle::openmpi, hosts) ==
        "a slots=5\nb slots=1\nfe80::1 slots=1\n");
  CHECK(rpim::vendor_hostfile_text(rpim::VendorStyle::mpich, hosts) == "a:2\nb:1\na:3\n[fe80::1]:1\n");
}

TEST_CASE("the vendor's mpiexec command line", "[rpim]") {
  rpim::VendorSettings s;
  s.name = "openmpi";
  s.mpiexec_args = "--mca btl self,vader";
  auto spec = rpim::resolve_vendor(s, "/g");
  rpim::VendorLaunch l;
  l.np = 8;
  l.hostfile = "/tmp/h";
  l.env_names = {"_YAMPI_PHASH", "GRIDMPI_VENDOR"};
  l.showrank = true;
  l.as_root = true;
  l.oversubscribe = true;
  l.agent_argv = {"/g/bin/gridmpi-proxy", "--vendor", "--", "./a.out"};
  CHECK(rpim::vendor_argv(spec, l) ==
        std::vector<std::string>{"mpiexec.openmpi", "--allow-run-as-root", "--oversubscribe", "--tag-output", "--mca",
                                 "btl", "self,vader", "-n", "8", "--hostfile", "/tmp/h", "-x", "_YAMPI_PHASH", "-x",
                                 "GRIDMPI_VENDOR", "/g/bin/gridmpi-proxy", "--vendor", "--", "./a.out"});
  s = {};
  s.name = "mpich";
  spec = rpim::resolve_vendor(s, "/g");
  // hydra: no root or oversubscription flags; variables by name in one list.
  CHECK(rpim::vendor_argv(spec, l) ==
        std::vector<std::string>{"mpiexec.mpich", "-prepend-rank", "-n", "8", "-f", "/tmp/h", "-genvlist",
                                 "_YAMPI_PHASH,GRIDMPI_VENDOR", "/g/bin/gridmpi-proxy", "--vendor", "--", "./a.out"});
}

TEST_CASE("mpirun's scratch entries: named after their mpirun, swept once it is gone", "[launcher]") {
  namespace fs = std::filesystem;
  char base[] = "/tmp/gridmpi-scratch-test-XXXXXX";
  REQUIRE(::mkdtemp(base) != nullptr);
  const std::string dir = base;
  // A pid that ran and is gone: a child that exited and was reaped.
  pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) ::_exit(0);
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  const std::string dead = std::to_string(child), self = std::to_string(::getpid());

  int fd = -1;
  const std::string file = launcher::make_scratch(dir, "hosts", false, &fd);
  REQUIRE(fd >= 0);
  ::close(fd);
  CHECK(file.rfind(dir + "/gridmpi-hosts-" + self + "-", 0) == 0);
  struct stat st {};
  REQUIRE(::stat(file.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  const std::string own_dir = launcher::make_scratch(dir, "vendor", true);
  REQUIRE(fs::is_directory(own_dir));

  // Left by a killed mpirun: a directory with a file in it, and a file.
  fs::create_directories(dir + "/gridmpi-vendor-" + dead + "-abcdef/vader");
  std::ofstream(dir + "/gridmpi-vendor-" + dead + "-abcdef/vader/seg") << "x";
  std::ofstream(dir + "/gridmpi-hosts-" + dead + "-ghijkl") << "a slots=1\n";
  // Not of this shape, or of another kind: kept.
  std::ofstream(dir + "/gridmpi-vendor-" + dead) << "";
  std::ofstream(dir + "/gridmpi-vendor-x" + dead + "-abcdef") << "";
  std::ofstream(dir + "/other-" + dead + "-abcdef") << "";

  CHECK(launcher::sweep_scratch(dir, "vendor") == 1);
  CHECK_FALSE(fs::exists(dir + "/gridmpi-vendor-" + dead + "-abcdef"));
  CHECK(fs::exists(dir + "/gridmpi-hosts-" + dead + "-ghijkl"));  // another kind: its own sweep
  CHECK(launcher::sweep_scratch(dir, "hosts") == 1);
  CHECK_FALSE(fs::exists(dir + "/gridmpi-hosts-" + dead + "-ghijkl"));
  // This process's entries stay, so do the odd names.
  CHECK(fs::exists(file));
  CHECK(fs::exists(own_dir));
  CHECK(fs::exists(dir + "/gridmpi-vendor-" + dead));
  CHECK(fs::exists(dir + "/gridmpi-vendor-x" + dead + "-abcdef"));
  CHECK(fs::exists(dir + "/other-" + dead + "-abcdef"));
  CHECK(launcher::sweep_scratch(dir, "vendor") == 0);
  CHECK(launcher::sweep_scratch(dir + "/missing", "vendor") == 0);

  // Another user's entry stays even when its pid is gone.
  if (::geteuid() == 0) {
    const std::string foreign = dir + "/gridmpi-vendor-" + dead + "-mnopqr";
    fs::create_directory(foreign);
    REQUIRE(::chown(foreign.c_str(), 65534, 65534) == 0);
    CHECK(launcher::sweep_scratch(dir, "vendor") == 0);
    CHECK(fs::exists(foreign));
  }
  fs::remove_all(dir);
}
