"""What the tests of tests/wan share: failures, verbose notes, and the
driver that runs named cases (every case runs, each reports PASS or FAIL;
exit 77 when not root or namespaces cannot be made here)."""
import argparse
import os
import signal
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "wan"))
from wanlib import WanSkip  # noqa: E402

SKIP = 77
_verbose = [False]


class Fail(Exception):
    pass


def say(text):
    if _verbose[0]:
        print("  " + text, flush=True)


def check(condition, message):
    if not condition:
        raise Fail(message)


def main(cases, setup):
    """cases: {name: fn(env)}; setup(build_dir, tmp_dir) -> env, raising Fail."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("-v", action="store_true")
    ap.add_argument("cases", nargs="*")
    args = ap.parse_args()
    _verbose[0] = args.v
    # A SIGTERM (ctest's time limit) unwinds like an error: the namespaces go.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    names = args.cases or list(cases)
    unknown = [n for n in names if n not in cases]
    if unknown:
        print(f"unknown case {unknown[0]}; cases: {' '.join(cases)}", file=sys.stderr)
        return 2
    if os.geteuid() != 0:
        print("SKIP: not root: network namespaces need root")
        return SKIP
    failed = 0
    with tempfile.TemporaryDirectory(prefix="gridmpi-wan-") as tmp:
        try:
            env = setup(os.path.abspath(args.build), tmp)
        except Fail as e:
            print(f"FAIL setup: {e}")
            return 1
        for name in names:
            t = time.monotonic()
            try:
                cases[name](env)
                print(f"PASS {name} ({time.monotonic() - t:.1f} s)", flush=True)
            except WanSkip as e:
                print(f"SKIP: {e}")
                return SKIP
            except Exception as e:  # noqa: BLE001 - every failure is reported, the next case still runs
                failed += 1
                print(f"FAIL {name}: {type(e).__name__}: {e}", flush=True)
    return 1 if failed else 0
