#!/bin/sh
# Every MPI_ function exported by libmpi.so must have its PMPI_ twin at the
# same address (the profiling interface), and nothing but the MPI API may be
# exported.  Also lists the functions of mpi.h not implemented yet.
# Usage: check_symbols.sh LIBMPI MPI_H
set -eu
lib=$1
header=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
nm -D --defined-only "$lib" | awk '$2 ~ /^[TW]$/ {print $3, $1}' | sort > "$tmp/defined"
status=0
while read -r name addr; do
  case "$name" in
    MPI_*_FN) ;;  # predefined attribute callbacks are plain functions
    MPI_*)
      twin=P$name
      taddr=$(awk -v n="$twin" '$1 == n {print $2}' "$tmp/defined")
      if [ -z "$taddr" ]; then echo "missing profiling entry point $twin"; status=1
      elif [ "$taddr" != "$addr" ]; then echo "$name and $twin differ"; status=1; fi ;;
    PMPI_*)
      grep -q "^${name#P} " "$tmp/defined" || { echo "$name has no MPI_ alias"; status=1; } ;;
    mpi_*|pmpi_*) ;;
    _init|_fini) ;;
    *) echo "unexpected exported symbol $name"; status=1 ;;
  esac
done < "$tmp/defined"
sed -n 's/^GRIDMPI_DECL([^,]*, *\([A-Za-z_0-9]*\),.*/MPI_\1/p' "$header" | sort > "$tmp/declared"
cut -d' ' -f1 "$tmp/defined" | grep '^MPI_' | sort > "$tmp/exported"
missing=$(comm -23 "$tmp/declared" "$tmp/exported" | tr '\n' ' ')
echo "$(wc -l < "$tmp/exported") MPI functions exported; declared in mpi.h but not implemented yet: ${missing:-none}"
exit $status
