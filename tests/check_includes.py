#!/usr/bin/env python3
"""The include graph of the source tree must only point down the layers
(issue 27, docs/design.md): base/ includes nothing of ours; conf/ only base/;
nothing in p2p/, impi/ or boot/ includes request/, core/ or launcher/ (and
p2p/ and impi/ not boot/); nothing in core/ includes launcher/, impi/ or a
transport folder (p2p/<name>/).

    tests/check_includes.py [--root DIR] [--known FILE] [--list]

Every #include "folder/..." line of the C++ sources (.cpp, .hpp) is read.
--known names the arrows that still exist while the restructuring is under
way, one "file -> included" per line ('#' comments): the check fails on an
arrow that is not listed (a new one) and on a listed one that is gone (so
that the list only shrinks).  --list prints today's arrows in that format.
Exit status 0 when the graph matches the list, 1 otherwise.
"""
import argparse
import os
import re
import sys

# (folder of the including file, folder prefixes it must not include, why)
RULES = [
    ("base/", ("conf/", "boot/", "p2p/", "impi/", "request/", "core/", "launcher/", "rpim/"),
     "base/ is the bottom: everything may include it, it includes nothing of ours"),
    ("conf/", ("boot/", "p2p/", "impi/", "request/", "core/", "launcher/", "rpim/"),
     "the parameter registry sits below every layer that declares parameters"),
    ("p2p/", ("boot/", "request/", "core/", "launcher/"), "transports sit below start-up, the request layer and core"),
    ("impi/", ("boot/", "request/", "core/", "launcher/"),
     "the IMPI layer sits below start-up, the request layer and core"),
    ("boot/", ("request/", "core/", "launcher/"),
     "start-up sits below the request layer and core; mpirun (launcher/) is a program above them all"),
    ("core/", ("launcher/", "impi/", "p2p/tcp/", "p2p/shm/", "p2p/self/", "p2p/vendor/", "p2p/template/"),
     "core reaches start-up and transports only through the layers below it"),
]
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def arrows(root):
    found = []
    for top in sorted({r[0] for r in RULES}):
        for base, dirs, files in os.walk(os.path.join(root, top)):
            dirs.sort()
            for name in sorted(files):
                if not name.endswith((".cpp", ".hpp")):
                    continue
                path = os.path.join(base, name)
                rel = os.path.relpath(path, root).replace(os.sep, "/")
                with open(path, encoding="utf-8", errors="replace") as f:
                    for line in f:
                        m = INCLUDE.match(line)
                        if not m:
                            continue
                        target = m.group(1)
                        for folder, banned, _ in RULES:
                            if rel.startswith(folder) and target.startswith(banned):
                                found.append("%s -> %s" % (rel, target))
    return found


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    here = os.path.dirname(os.path.abspath(__file__))
    p.add_argument("--root", default=os.path.dirname(here))
    p.add_argument("--known", default=os.path.join(here, "include_arrows_known.txt"))
    p.add_argument("--list", action="store_true")
    a = p.parse_args()
    now = arrows(a.root)
    if a.list:
        print("\n".join(now))
        return 0
    known = []
    if os.path.exists(a.known):
        with open(a.known) as f:
            known = [l.strip() for l in f if l.strip() and not l.startswith("#")]
    new = [x for x in now if x not in known]
    gone = [x for x in known if x not in now]
    for x in new:
        print("check_includes: new arrow up the layers: %s (see the rules in %s)" % (x, __file__))
    for x in gone:
        print("check_includes: %s is gone: remove it from %s" % (x, a.known))
    print("check_includes: %d arrow(s) up the layers left to remove, %d new, %d gone" % (len(now), len(new), len(gone)))
    return 1 if new or gone else 0


if __name__ == "__main__":
    sys.exit(main())
