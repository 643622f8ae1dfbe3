#!/bin/bash
# Two "hosts" on one machine (netns_hosts.sh: network namespaces A
# (10.77.0.1) and B (10.77.0.2), sshd in B).  mpirun runs in A and starts
# 2 ranks on each host, the remote ones through ssh and gridmpi-proxy.
# Everything is torn down on exit.
#   two_hosts.sh BUILD_DIR        exit 0 pass, 1 fail, 77 skip (not root...)
set -u
build=$(cd "$1" && pwd)
skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; for f in out err; do [ -f "$work/$f" ] && sed "s/^/  $f: /" "$work/$f"; done; exit 1; }

here=$(cd "$(dirname "$0")" && pwd)
. "$here/netns_hosts.sh"
cleanup() {
  # Any rank or agent that escaped would be named in the pid files.
  for f in "${work:-/nonexistent}"/pids/*; do [ -f "$f" ] && kill -9 "$(cat "$f")" 2>/dev/null; done
  netns_hosts_down
}
trap cleanup EXIT
netns_hosts_up

mkdir "$work/pids"
printf '# two hosts, two slots each\n10.77.0.1 2\n10.77.0.2 2\n' > "$work/hosts"
cd "$work"
run() {  # run TIMEOUT mpirun-args...
  local t=$1
  shift
  rm -f "$work"/pids/*
  local start=$(date +%s.%N)
  ip netns exec "$nsA" env -u MPIROOT _YAMPI_RSH="$rsh" GRIDMPI_TEST_PIDDIR="$work/pids" \
    timeout "$t" "$build/bin/mpirun" "$@" > "$work/out" 2> "$work/err"
  status=$?
  elapsed=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
}
nothing_left() {  # nothing_left [ranks-only]
  sleep 0.5
  if [ "${1:-}" = ranks-only ]; then
    # A job that ended normally may leave what its ranks started in the background.
    for f in "$work"/pids/child.*; do [ -f "$f" ] && kill -9 "$(cat "$f")" 2>/dev/null; done
    rm -f "$work"/pids/child.*
  fi
  for f in "$work"/pids/*; do
    pid=$(cat "$f")
    state=$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null)
    [ -z "$state" ] || [ "$state" = Z ] || fail "$(basename "$f") (pid $pid) still running after mpirun exited"
  done
}

# 1. A job across both hosts: every rank sees everyone's value, and each
#    advertises the address its host uses towards mpirun.
run 60 -np 4 -c "$work/hosts" "$build/tests/launcher/control_prog" ok
[ "$status" = 0 ] || fail "mpirun exited $status"
sort "$work/out" > "$work/sorted"
expected="rank 0 of 4 ok ep0,ep1,ep2,ep3, local=10.77.0.1
rank 1 of 4 ok ep0,ep1,ep2,ep3, local=10.77.0.1
rank 2 of 4 ok ep0,ep1,ep2,ep3, local=10.77.0.2
rank 3 of 4 ok ep0,ep1,ep2,ep3, local=10.77.0.2"
[ "$(cat "$work/sorted")" = "$expected" ] || fail "unexpected output"
nothing_left ranks-only
echo "ok: 4 ranks on two hosts"

# 2. A remote rank segfaults: one line naming rank, host and pid; all stopped.
run 60 -np 4 -c "$work/hosts" "$build/tests/launcher/control_prog" segv 3
[ "$status" = 255 ] || fail "segfault: mpirun exited $status"
pid=$(cat "$work/pids/rank.3")
grep -q "^mpirun: rank 3 (10.77.0.2, pid $pid) killed by signal 11 (Segmentation fault)$" "$work/err" ||
  fail "segfault line missing"
[ "$(grep -c '^mpirun: ' "$work/err")" = 1 ] || fail "more than one mpirun line"
awk -v e="$elapsed" 'BEGIN { exit !(e < 10) }' || fail "stopping took $elapsed s"
nothing_left
echo "ok: remote segfault stops the job in $elapsed s"

# 3. An unreachable host: one line naming the host and the fix.
printf '10.77.0.1\n10.77.0.9\n' > "$work/bad_hosts"
run 60 -np 2 -c "$work/bad_hosts" hostname
[ "$status" = 255 ] || fail "unreachable host: mpirun exited $status"
grep -q "^mpirun: cannot start rank 1 on host 10.77.0.9: .* true' works" "$work/err" || fail "unreachable host line missing"
echo "ok: unreachable host reported"

# 4. A real MPI program (mpicc, MPI_Init over the control service, TCP between hosts).
cat > "$work/hello.c" <<'EOC'
#include <mpi.h>
#include <stdio.h>
#include <unistd.h>
int main(int argc, char** argv) {
  int rank, size, sum = 0, one = 1;
  char host[64];
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  printf("hello %d of %d sum %d\n", rank, size, sum);
  MPI_Finalize();
  return 0;
}
EOC
"$build/bin/mpicc" -o "$work/hello" "$work/hello.c" 2> "$work/err" || fail "mpicc failed"
run 60 -np 4 -c "$work/hosts" "$work/hello"
[ "$status" = 0 ] || fail "MPI hello across hosts: mpirun exited $status"
[ "$(sort "$work/out" | tr '\n' ' ')" = "hello 0 of 4 sum 4 hello 1 of 4 sum 4 hello 2 of 4 sum 4 hello 3 of 4 sum 4 " ] ||
  fail "MPI hello across hosts: unexpected output"
echo "ok: MPI program across two hosts"
echo PASS
