// mpcxx in the SPMD style, every construct between every pair of nodes:
// invoke / ainvoke (results, strings, vectors, user types, nested calls from
// a handler, errors thrown remotely), Future and Sync (local, remote write,
// ainvoke into one), GlobalPtr (read, write, nwrite + fence, small and
// large, canonical and user element types, arithmetic, pointers passed to
// invoke), remote member calls, the collectives, and the errors of bad use.
// Any MPI: built with gridmpi's mpic++ and with Open MPI's and MPICH's.
#include <mpcxx.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <string>
#include <vector>

namespace {

int failures = 0;
#define CHECK(cond, ...)                                                             \
  do {                                                                               \
    if (!(cond)) {                                                                   \
      std::fprintf(stderr, "node %d: %s:%d: %s: ", mpcxx::node(), __FILE__, __LINE__, #cond); \
      std::fprintf(stderr, __VA_ARGS__);                                             \
      std::fprintf(stderr, "\n");                                                    \
      ++failures;                                                                    \
    }                                                                                \
  } while (0)

// Whether f throws an mpcxx::Error whose text contains `part`.
template <class F>
bool throws_error(F f, const std::string& part) {
  try {
    f();
  } catch (const mpcxx::Error& e) {
    if (std::string(e.what()).find(part) != std::string::npos) return true;
    std::fprintf(stderr, "node %d: error without \"%s\": %s\n", mpcxx::node(), part.c_str(), e.what());
    return false;
  }
  return false;
}

}  // namespace

struct Point {
  double x = 0, y = 0;
  std::string label;
  template <class A>
  void serialize(A& a) {
    a(x, y, label);
  }
};

struct Counter {
  long total = 0;
  long add(long k) {
    total += k;
    return total;
  }
};
MPCXX_REMOTE_MEMBER(Counter, add);

int add(int a, int b) { return a + b; }
MPCXX_REMOTE(add);

std::string greet(std::string who, int node) { return "hello " + who + " from node " + std::to_string(node) + " on " + std::to_string(mpcxx::node()); }
MPCXX_REMOTE(greet);

double sum(std::vector<double> v) { return std::accumulate(v.begin(), v.end(), 0.0); }
MPCXX_REMOTE(sum);

Point mirror(Point p) { return Point{-p.x, -p.y, p.label + "'"}; }
MPCXX_REMOTE(mirror);

int fails(int code) {
  if (code) throw std::runtime_error("asked to fail with " + std::to_string(code));
  return 0;
}
MPCXX_REMOTE(fails);

// A handler that invokes in turn (on the next node, which may be the
// caller: its node must keep serving while it waits).
int nested(int depth) {
  if (depth == 0) return mpcxx::node();
  return mpcxx::invoke((mpcxx::node() + 1) % mpcxx::nodes(), nested, depth - 1) + 1000;
}
MPCXX_REMOTE(nested);

// Writes into a GlobalPtr it is given: pointers travel as arguments.
void put_square(mpcxx::GlobalPtr<long> where, long v) { where.write(v * v); }
MPCXX_REMOTE(put_square);

int not_registered(int x) { return x; }

int main(int argc, char** argv) {
  mpcxx::Runtime rt(&argc, &argv);
  const int me = mpcxx::node(), p = mpcxx::nodes();

  // invoke on every node, this one included.
  for (int n = 0; n < p; ++n) {
    CHECK(mpcxx::invoke(n, add, 40, n) == 40 + n, "add on node %d", n);
    int r = 0;
    mpcxx::invoke(r, n, add, 1, 2);  // the paper's form
    CHECK(r == 3, "invoke(result, ...) on node %d gave %d", n, r);
    const std::string g = mpcxx::invoke(n, greet, std::string("mpcxx"), me);
    CHECK(g == "hello mpcxx from node " + std::to_string(me) + " on " + std::to_string(n), "greet: %s", g.c_str());
    std::vector<double> v(1000);
    std::iota(v.begin(), v.end(), 1.0);
    CHECK(mpcxx::invoke(n, sum, v) == 500500.0, "sum on node %d", n);
    std::vector<double> big(300000, 0.5);  // larger than a header's inline payload
    CHECK(mpcxx::invoke(n, sum, big) == 150000.0, "sum of a large vector on node %d", n);
    const Point q = mpcxx::invoke(n, mirror, Point{1.5, -2, "p"});
    CHECK(q.x == -1.5 && q.y == 2 && q.label == "p'", "mirror on node %d", n);
    CHECK(mpcxx::invoke(n, nested, 3) == 3000 + (n + 3) % p, "nested from node %d", n);
    CHECK(throws_error([&] { mpcxx::invoke(n, fails, 7); }, "asked to fail with 7"), "remote exception from %d", n);
  }

  // ainvoke: futures and a Sync, many in flight.
  {
    std::vector<mpcxx::Future<int>> futures;
    for (int k = 0; k < 50; ++k) futures.push_back(mpcxx::ainvoke(k % p, add, k, 1));
    for (int k = 0; k < 50; ++k) CHECK(futures[static_cast<std::size_t>(k)].get() == k + 1, "future %d", k);
    mpcxx::Sync<int> results;
    for (int k = 0; k < 20; ++k) mpcxx::ainvoke(results, k % p, add, k, 0);
    long total = 0;
    for (int k = 0; k < 20; ++k) total += results.read();
    CHECK(total == 190, "ainvoke into a Sync: %ld", total);
    mpcxx::ainvoke(results, (me + 1) % p, fails, 3);
    CHECK(throws_error([&] { results.read(); }, "asked to fail with 3"), "a failed ainvoke reads as an error");
  }

  // Sync: local FIFO, peek, queueLength; remote writes through a GlobalPtr.
  {
    mpcxx::Sync<std::string> s;
    s.write("a");
    s.write("b");
    CHECK(s.queueLength() == 2, "queueLength");
    CHECK(s.peek() == "a" && s.queueLength() == 2, "peek");
    CHECK(s.read() == "a" && s.read() == "b" && s.queueLength() == 0, "FIFO order");
    mpcxx::Sync<int> inbox;
    auto boxes = mpcxx::allgather(inbox.global());
    for (int n = 0; n < p; ++n) boxes[static_cast<std::size_t>(n)].write(me * 100 + n);
    long got = 0;
    for (int n = 0; n < p; ++n) got += inbox.read();
    long want = 0;
    for (int n = 0; n < p; ++n) want += n * 100 + me;
    CHECK(got == want, "remote Sync writes: %ld, expected %ld", got, want);
    mpcxx::barrier();
  }

  // GlobalPtr: a global array per node, written and read by every node.
  {
    const std::size_t n = 64;
    mpcxx::GlobalArray<long> a(n * static_cast<std::size_t>(p), -1);
    auto arrays = mpcxx::allgather(a.ptr());
    mpcxx::barrier();
    for (int t = 0; t < p; ++t) {
      std::vector<long> mine(n);
      for (std::size_t i = 0; i < n; ++i) mine[i] = me * 1000000L + t * 1000L + static_cast<long>(i);
      if (t % 2) arrays[static_cast<std::size_t>(t)] .operator+(static_cast<std::int64_t>(me * n)).nwrite(mine.data(), n);
      else (arrays[static_cast<std::size_t>(t)] + static_cast<std::int64_t>(me * n)).write(mine.data(), n);
    }
    mpcxx::barrier();  // nwrites included
    for (int from = 0; from < p; ++from)
      for (std::size_t i = 0; i < n; ++i)
        CHECK(a[static_cast<std::size_t>(from) * n + i] == from * 1000000L + me * 1000L + static_cast<long>(i),
              "element %zu from node %d: %ld", i, from, a[static_cast<std::size_t>(from) * n + i]);
    for (int t = 0; t < p; ++t) {
      std::vector<long> back(n);
      (arrays[static_cast<std::size_t>(t)] + static_cast<std::int64_t>(me * n)).read(back.data(), n);
      CHECK(back[5] == me * 1000000L + t * 1000L + 5, "read back from node %d", t);
      CHECK(*(arrays[static_cast<std::size_t>(t)] + 3) == t * 1000L + 3, "one element of node %d", t);  // node 0 wrote it
    }
    // A pointer passed to a function that writes through it.
    mpcxx::GlobalArray<long> cell(1);
    const int right = (me + 1) % p;
    mpcxx::invoke(right, put_square, cell.ptr(), static_cast<long>(me + 2));
    CHECK(cell[0] == (me + 2) * (me + 2), "put_square through a passed pointer: %ld", cell[0]);
    mpcxx::barrier();
  }

  // Large transfers (the payload in a message of its own, straight into
  // place) and elements with no canonical form.
  {
    const std::size_t n = 1 << 18;
    mpcxx::GlobalArray<double> big(n);
    auto ptrs = mpcxx::allgather(big.ptr());
    mpcxx::barrier();
    const int right = (me + 1) % p, left = (me + p - 1) % p;
    std::vector<double> data(n);
    for (std::size_t i = 0; i < n; ++i) data[i] = me + i * 0.25;
    ptrs[static_cast<std::size_t>(right)].write(data.data(), n);
    mpcxx::barrier();
    CHECK(big[n - 1] == left + (n - 1) * 0.25, "large write from node %d", left);
    std::vector<double> back(n);
    ptrs[static_cast<std::size_t>(right)].read(back.data(), n);
    CHECK(back == data, "large read back from node %d", right);

    mpcxx::GlobalArray<Point> pts(4);
    auto pp = mpcxx::allgather(pts.ptr());
    mpcxx::barrier();
    Point x{1, 2, "node " + std::to_string(me)};
    (pp[static_cast<std::size_t>(right)] + 1).write(x);
    mpcxx::barrier();
    CHECK(pts[1].label == "node " + std::to_string(left) && pts[1].y == 2, "a Point written by node %d", left);
    CHECK((pp[static_cast<std::size_t>(right)] + 1).read().label == "node " + std::to_string(me), "a Point read");
    mpcxx::barrier();
  }

  // Remote member calls.
  {
    Counter c;
    mpcxx::Global<Counter> g(c);
    auto counters = mpcxx::allgather(g.ptr());
    mpcxx::barrier();
    for (int t = 0; t < p; ++t) counters[static_cast<std::size_t>(t)].invoke(&Counter::add, static_cast<long>(me + 1));
    mpcxx::barrier();
    CHECK(c.total == static_cast<long>(p) * (p + 1) / 2, "member calls: %ld", c.total);
    mpcxx::barrier();
  }

  // Collectives.
  {
    CHECK(mpcxx::allreduce(me + 1) == p * (p + 1) / 2, "allreduce sum");
    CHECK(mpcxx::allreduce(me, mpcxx::max{}) == p - 1, "allreduce max");
    double v[3] = {1.0 * me, 2.0, 3.0};
    mpcxx::allreduce(v, 3, std::plus<>{});
    CHECK(v[1] == 2.0 * p, "array allreduce");
    long r = me;
    mpcxx::reduce(&r, 1, 0, std::plus<>{});
    if (me == 0) CHECK(r == static_cast<long>(p) * (p - 1) / 2, "reduce to 0: %ld", r);
    std::string word = me == p - 1 ? "from the last node" : "";
    mpcxx::broadcast(word, p - 1);
    CHECK(word == "from the last node", "broadcast: %s", word.c_str());
  }

  // Bad use: each is an Error naming the cause.
  {
    CHECK(throws_error([&] { mpcxx::invoke(p, add, 1, 2); }, "out of range"), "node out of range");
    CHECK(throws_error([&] { mpcxx::invoke((me + 1) % p, not_registered, 1); }, "not registered"),
          "unregistered function");
    mpcxx::GlobalPtr<long> stale;
    {
      mpcxx::GlobalArray<long> gone(4);
      stale = gone.ptr();
    }
    auto stales = mpcxx::allgather(stale);
    const auto& other = stales[static_cast<std::size_t>((me + 1) % p)];
    CHECK(throws_error([&] { other.read(); }, "does not exist"), "a freed object");
    mpcxx::GlobalArray<long> small(4);
    auto smalls = mpcxx::allgather(small.ptr());
    CHECK(throws_error([&] { (smalls[static_cast<std::size_t>((me + 1) % p)] + 4).read(); }, "out of range"),
          "an index out of range");
    CHECK(throws_error([&] { mpcxx::GlobalPtr<long>().read(); }, "null"), "a null pointer");
    mpcxx::barrier();
  }

  const int all_failures = mpcxx::allreduce(failures);
  if (me == 0) std::printf("mpcxx_spmd: %d nodes, %s\n", p, all_failures ? "FAILED" : "OK");
  return all_failures ? 1 : 0;
}
