#!/bin/sh
# ctest_run.sh SECONDS MPIRUN NP PROGRAM CLASS
# Runs one NPB kernel under MPIRUN; passes (exit 0) when the run exits 0 and
# prints verification=SUCCESSFUL.  timeout(1) puts the run in its own process
# group and kills that whole group when SECONDS pass (SIGKILL 5 s after TERM).
limit=$1 mpirun=$2 np=$3 program=$4 class=$5
out=$(timeout -k 5 "$limit" "$mpirun" -np "$np" "$program" "$class" 2>&1)
status=$?
printf '%s\n' "$out"
if [ "$status" -eq 124 ] || [ "$status" -eq 137 ]; then
  echo "npb: $program class $class np $np: no exit after $limit s, killed" >&2
  exit 1
fi
if [ "$status" -ne 0 ]; then
  echo "npb: $program class $class np $np: exit status $status" >&2
  exit 1
fi
case $out in
  *verification=SUCCESSFUL*) exit 0 ;;
esac
echo "npb: $program class $class np $np: no 'verification=SUCCESSFUL' line" >&2
exit 1
