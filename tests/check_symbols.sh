#!/bin/sh
# Every MPI_ function exported by libmpi.so must have its PMPI_ twin at the
# same address (the profiling interface), and so must gridmpi's extensions
# (GMPI_ and PGMPI_, core/include/mpi.h); nothing else may be exported.  Also lists the functions of mpi.h not implemented yet.
# Usage: check_symbols.sh LIBMPI MPI_H
set -eu
lib=$1
header=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
nm -D --defined-only "$lib" | awk '$2 ~ /^[TW]$/ {print $3, $1}' | sort > "$tmp/defined"
status=0
# $1 (at $2) must have its profiling twin P$1 at the same address.
has_twin() {
  taddr=$(awk -v n="P$1" '$1 == n {print $2}' "$tmp/defined")
  if [ -z "$taddr" ]; then echo "missing profiling entry point P$1"; status=1
  elif [ "$taddr" != "$2" ]; then echo "$1 and P$1 differ"; status=1; fi
}
while read -r name addr; do
  case "$name" in
    MPI_*_FN) ;;  # predefined attribute callbacks are plain functions
    MPI_*|GMPI_*) has_twin "$name" "$addr" ;;
    PMPI_*|PGMPI_*)
      grep -q "^${name#P} " "$tmp/defined" || { echo "$name has no ${name#P} alias"; status=1; } ;;
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
