#!/usr/bin/env python3
"""Counts the MPICH test suite's results (the XML files runtests writes, one
per test directory) for tests/thirdparty/mpich-testsuite.

    mpich_results.py summary --max-np N OUT DIR...
        per directory: passed/counted, the failing entries; then the total
    mpich_results.py compare --max-np N GRIDMPI_OUT MPICH_OUT DIR...
        both counts side by side, and the entries that fail on one only

An entry is one line of a testlist: directory, program, arguments and rank
count (runs of one program that differ only in their environment are told
apart by their order).  Entries needing more than N ranks (N > 0) are not
run (the mpiexec wrapper refuses them) and not counted.
"""
import argparse
import os
import re
import sys

FIELDS = ("NAME", "ARGS", "NP", "WORKDIR", "STATUS")


def entries(out, d):
    """[(key, status)] of OUT/d.xml in file order; [] when it is missing."""
    try:
        with open(os.path.join(out, d + ".xml"), encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError:
        return []
    found, seen = [], {}
    for block in re.findall(r"<MPITEST>(.*?)</MPITEST>", text, re.S):
        v = {}
        for name in FIELDS:
            m = re.search(r"<%s>(.*?)</%s>" % (name, name), block, re.S)
            v[name] = m.group(1).strip() if m else ""
        where = v["WORKDIR"].lstrip("./") or d
        base = (where, v["NAME"], v["ARGS"], v["NP"])
        seen[base] = seen.get(base, 0) + 1
        found.append((base + (seen[base],), v["STATUS"] or "fail"))
    return found


def counted(out, d, max_np):
    """{key: passed?} of the entries within the rank cap, and how many were left out."""
    kept, capped = {}, 0
    for key, status in entries(out, d):
        if max_np > 0 and key[3].isdigit() and int(key[3]) > max_np:
            capped += 1
            continue
        kept[key] = status == "pass"
    return kept, capped


def label(key):
    where, name, args, np, nth = key
    return "%s/%s%s np=%s%s" % (where, name, " " + args if args else "", np,
                                " (#%d)" % nth if nth > 1 else "")


def summary(a):
    total = passed = capped_all = 0
    for d in a.dirs:
        kept, capped = counted(a.out, d, a.max_np)
        if not kept and not capped:
            print("%s: no results (see %s.log)" % (d, os.path.join(a.out, d)))
            continue
        p = sum(kept.values())
        total, passed, capped_all = total + len(kept), passed + p, capped_all + capped
        print("%s: %d/%d passed%s" % (d, p, len(kept), ", %d not run (more than %d ranks)" % (capped, a.max_np)
                                      if capped else ""))
        for key, ok in kept.items():
            if not ok:
                print("  FAIL " + label(key))
    print("total: %d/%d passed%s" % (passed, total, ", %d not run (more than %d ranks)" % (capped_all, a.max_np)
                                     if capped_all else ""))
    return 0


def compare(a):
    rows, only_g, only_m = [], [], []
    tg = tm = pg = pm = 0
    for d in a.dirs:
        g, _ = counted(a.gridmpi, d, a.max_np)
        m, _ = counted(a.mpich, d, a.max_np)
        rows.append((d, sum(g.values()), len(g), sum(m.values()), len(m)))
        pg, tg, pm, tm = pg + rows[-1][1], tg + len(g), pm + rows[-1][3], tm + len(m)
        only_g += [label(k) for k, ok in g.items() if not ok and m.get(k)]
        only_m += [label(k) for k, ok in m.items() if not ok and g.get(k)]
    cap = ("ranks capped at %d" % a.max_np) if a.max_np > 0 else "no rank cap"
    print("MPICH test suite, %s: passed/counted" % cap)
    print("%-10s %14s %14s" % ("directory", "gridmpi", "MPICH 4.0.2"))
    for d, p1, t1, p2, t2 in rows:
        print("%-10s %14s %14s" % (d, "%d/%d" % (p1, t1), "%d/%d" % (p2, t2)))
    print("%-10s %14s %14s" % ("total", "%d/%d" % (pg, tg), "%d/%d" % (pm, tm)))
    verdict = "at least as many as" if pg >= pm else "FEWER than"
    print("gridmpi passes %d entries, %s MPICH (%d)" % (pg, verdict, pm))
    print("fail on gridmpi, pass on MPICH (%d):" % len(only_g))
    for l in only_g:
        print("  " + l)
    print("fail on MPICH, pass on gridmpi (%d):" % len(only_m))
    for l in only_m:
        print("  " + l)
    return 0 if pg >= pm else 1


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("summary")
    s.add_argument("--max-np", type=int, default=0)
    s.add_argument("out")
    s.add_argument("dirs", nargs="+")
    c = sub.add_parser("compare")
    c.add_argument("--max-np", type=int, default=0)
    c.add_argument("gridmpi")
    c.add_argument("mpich")
    c.add_argument("dirs", nargs="+")
    a = p.parse_args()
    return summary(a) if a.cmd == "summary" else compare(a)


if __name__ == "__main__":
    sys.exit(main())
