#!/bin/bash
# Two "hosts" on one machine: network namespaces A (10.77.0.1) and B
# (10.77.0.2) joined by a veth pair; Debian's sshd runs in B on a private
# port with a host key and an authorized key made here (the system's ssh
# configuration is not touched; sshd's /run/sshd lives in a private mount
# namespace).  mpirun runs in A and starts 2 ranks on each host, the remote
# ones through ssh and gridmpi-proxy.  Everything is torn down on exit.
#   two_hosts.sh BUILD_DIR        exit 0 pass, 1 fail, 77 skip (not root...)
set -u
build=$(cd "$1" && pwd)
skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; for f in out err; do [ -f "$work/$f" ] && sed "s/^/  $f: /" "$work/$f"; done; exit 1; }

[ "$(id -u)" = 0 ] || skip "needs root (network namespaces)"
[ -x /usr/sbin/sshd ] || skip "openssh-server is not installed"
command -v ip >/dev/null && command -v ssh >/dev/null && command -v ssh-keygen >/dev/null && command -v unshare >/dev/null ||
  skip "needs ip, ssh, ssh-keygen, unshare"

id=$$
nsA=gmA$id
nsB=gmB$id
work=$(mktemp -d /tmp/gridmpi-two-hosts.XXXXXX)
chmod 755 "$work"
cleanup() {
  if [ -f "$work/sshd.pid" ]; then kill "$(cat "$work/sshd.pid")" 2>/dev/null; fi
  # Any rank or agent that escaped would be named in the pid files.
  for f in "$work"/pids/*; do [ -f "$f" ] && kill -9 "$(cat "$f")" 2>/dev/null; done
  ip netns del "$nsA" 2>/dev/null
  ip netns del "$nsB" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

ip netns add "$nsA" 2>/dev/null || skip "cannot create network namespaces here"
ip netns add "$nsB" || fail "ip netns add $nsB"
ip link add "vA$id" type veth peer name "vB$id" || fail "cannot create a veth pair"
ip link set "vA$id" netns "$nsA" && ip link set "vB$id" netns "$nsB" || fail "cannot move the veth ends"
ip -n "$nsA" addr add 10.77.0.1/24 dev "vA$id"
ip -n "$nsB" addr add 10.77.0.2/24 dev "vB$id"
for ns in "$nsA" "$nsB"; do ip -n "$ns" link set lo up; done
ip -n "$nsA" link set "vA$id" up
ip -n "$nsB" link set "vB$id" up

ssh-keygen -q -t ed25519 -N '' -f "$work/host_key" || fail "ssh-keygen"
ssh-keygen -q -t ed25519 -N '' -f "$work/user_key" || fail "ssh-keygen"
cp "$work/user_key.pub" "$work/authorized_keys"
cat > "$work/sshd_config" <<EOC
Port 2222
ListenAddress 10.77.0.2
HostKey $work/host_key
AuthorizedKeysFile $work/authorized_keys
PidFile $work/sshd.pid
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
X11Forwarding no
PrintMotd no
EOC
ip netns exec "$nsB" unshare -m sh -c \
  "mount -t tmpfs tmpfs /run && mkdir -m 755 /run/sshd && exec /usr/sbin/sshd -f '$work/sshd_config' -E '$work/sshd.log'" ||
  fail "sshd did not start: $(cat "$work/sshd.log" 2>/dev/null)"
for i in $(seq 50); do
  ip netns exec "$nsA" bash -c 'exec 3<>/dev/tcp/10.77.0.2/2222' 2>/dev/null && break
  sleep 0.2
done
[ -f "$work/sshd.pid" ] || fail "sshd wrote no pid file: $(cat "$work/sshd.log" 2>/dev/null)"

rsh="ssh -p 2222 -i $work/user_key -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o BatchMode=yes -o LogLevel=ERROR -o ConnectTimeout=5"
ip netns exec "$nsA" $rsh 10.77.0.2 true || fail "plain ssh between the namespaces does not work"

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
