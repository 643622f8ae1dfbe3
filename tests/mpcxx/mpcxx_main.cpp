// mpcxx in the mpc_main style (the paper's figures 2 and 3): node 0 runs
// mpc_main, the other nodes serve.  A master-worker over ainvoke and a Sync:
// the master hands out 200 tasks, at most two in flight per worker, and
// collects the results as they come; then a task that runs the same code
// on every node (an SPMD phase started from mpc_main, with a barrier and a
// reduction inside).
#include <mpcxx.hpp>

#include <cstdio>
#include <vector>

long square(long k) {
  // Some work, and a yield: other tasks of this node run meanwhile.
  long s = 0;
  for (long i = 0; i < 1000; ++i) s += (k * i) % 7;
  mpcxx::yield();
  return k * k + s - s;
}
MPCXX_REMOTE(square);

long phase(int rounds) {
  long mine = 0;
  for (int r = 0; r < rounds; ++r) {
    mine += mpcxx::node() + r;
    mpcxx::barrier();
  }
  return mpcxx::allreduce(mine);
}
MPCXX_REMOTE(phase);

int mpc_main(int, char**) {
  const int p = mpcxx::nodes();
  int failures = 0;
  // Master-worker: workers are nodes 1..p-1 (node 0 itself with one node).
  mpcxx::Sync<long> done;
  const int tasks = 200;
  int next = 0, received = 0;
  long total = 0;
  const int workers = p > 1 ? p - 1 : 1;
  for (int w = 0; w < workers && next < tasks; ++w)
    for (int k = 0; k < 2 && next < tasks; ++k) mpcxx::ainvoke(done, p > 1 ? 1 + w : 0, square, static_cast<long>(next++));
  while (received < tasks) {
    total += done.read();
    ++received;
    if (next < tasks) {
      mpcxx::ainvoke(done, p > 1 ? 1 + next % workers : 0, square, static_cast<long>(next));
      ++next;
    }
  }
  long want = 0;
  for (long k = 0; k < tasks; ++k) want += k * k;
  if (total != want) {
    std::fprintf(stderr, "master-worker: %ld, expected %ld\n", total, want);
    ++failures;
  }
  // An SPMD phase on every node, this one included.
  std::vector<mpcxx::Future<long>> all;
  for (int n = 0; n < p; ++n) all.push_back(mpcxx::ainvoke(n, phase, 5));
  long expect = 0;
  for (int n = 0; n < p; ++n)
    for (int r = 0; r < 5; ++r) expect += n + r;
  for (auto& f : all) {
    const long got = f.get();
    if (got != expect) {
      std::fprintf(stderr, "phase: %ld, expected %ld\n", got, expect);
      ++failures;
    }
  }
  std::printf("mpcxx_main: %d nodes, %s\n", p, failures ? "FAILED" : "OK");
  return failures ? 1 : 0;
}

MPCXX_MAIN
