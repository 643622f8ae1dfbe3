#!/bin/bash
# The whole MPI test suite (tests/mpi/*.list) with its ranks spread over two
# "hosts" (tests/launcher/netns_hosts.sh: network namespaces with sshd in
# the second): the host file lists each host once with one slot, so ranks
# alternate (0, 2 on 10.77.0.1; 1, 3 on 10.77.0.2) and every run of 3 or
# more ranks mixes shared memory (ranks of one host) with tcp (between the
# hosts).  Each list entry runs once, at its largest rank count up to 4.
#   two_hosts_suite.sh BUILD_DIR [run_mpi_tests.py options, e.g. -k p2p_]
# Exit 0 pass, 1 fail, 77 skip (not root, no namespaces or sshd).
set -u
build=$(cd "$1" && pwd)
shift
here=$(cd "$(dirname "$0")" && pwd)
skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }
. "$here/../launcher/netns_hosts.sh"
trap netns_hosts_down EXIT
netns_hosts_up
printf '10.77.0.1\n10.77.0.2\n' > "$work/hosts"
printf -v quoted_rsh '%q' "$rsh"
mpirun="ip netns exec $nsA env -u MPIROOT _YAMPI_RSH=$quoted_rsh $build/bin/mpirun -c $work/hosts"
python3 "$here/run_mpi_tests.py" --build-dir "$build" --mpirun "$mpirun" \
  --work-dir "$build/tests/mpi/two_hosts" --largest-up-to 4 -j 2 --timeout-scale 2 "$@"
rc=$?
if [ "$rc" != 0 ] && [ -s "$work/sshd.log" ]; then
  # A run that never got its remote rank started: did the ssh reach sshd?
  echo "--- sshd in $nsB (last 60 lines of its log) ---"
  tail -n 60 "$work/sshd.log"
fi
exit "$rc"
