#!/bin/sh
# Runs the MPI_THREAD_MULTIPLE programs (thr.list) under
# ThreadSanitizer, against a build tree configured with the "tsan" preset
# (library, mpirun and proxy built with -fsanitize=thread; the test programs
# are compiled with it here).  Any TSan report ends the reporting process
# with status 66, which fails the run.
#   tests/mpi/run_tsan.sh [build-dir]      (default: build/tsan)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${1:-$root/build/tsan}
[ -x "$build/bin/mpirun" ] || {
  echo "run_tsan: $build/bin/mpirun is missing; build it first: cmake --preset tsan && cmake --build --preset tsan" >&2
  exit 2
}
# halt_on_error: the first report fails the run (exit status 66), so a race
# cannot hide behind a test that otherwise passes.  history_size: longer
# stacks for the "previous access" of a report.
TSAN_OPTIONS="halt_on_error=1 exitcode=66 history_size=4 suppressions=$here/tsan.supp ${TSAN_OPTIONS:-}"
export TSAN_OPTIONS
# Debian 12's gcc-12 TSan runtime cannot map its shadow memory with the
# kernel's default mmap randomisation (28+ bits): run without ASLR.
run="python3 $here/run_mpi_tests.py"
if command -v setarch >/dev/null 2>&1 && [ "$(cat /proc/sys/vm/mmap_rnd_bits 2>/dev/null || echo 0)" -gt 28 ]; then
  run="setarch $(uname -m) -R $run"
fi
exec $run --build-dir "$build" --cflags "-g -O1 -Wall -pthread -fsanitize=thread" \
  --work-dir "$build/tests/mpi-tsan" --timeout-scale 3 -j 2 \
  --lists "$here/thr.list"
