#!/usr/bin/env python3
"""Runs commands in alternating order and prints medians with min-max.

Usage: scripts/alternate.py ROUNDS LABEL 'COMMAND' [LABEL 'COMMAND' ...]

Each round runs every command once through `bash -c` under GNU time (round
1 in the order given, round 2 reversed, and so on), so that a slow minute
of a shared machine falls on every command alike. Per command it prints
the median [min-max] of the wall time, the peak RSS, and, when the program
prints them (the suite's workers and peers do), its own `TIME <ms>` and
the `gc_ms` and `pause_p50_us` of its `RESULT {...}` line. A failing run
is reported and left out. Needs GNU time (Debian package `time`)."""
import re
import statistics
import subprocess
import sys


def main():
    if len(sys.argv) < 4 or len(sys.argv) % 2 != 0:
        sys.exit(__doc__)
    rounds = int(sys.argv[1])
    cases = list(zip(sys.argv[2::2], sys.argv[3::2]))
    got = {label: {} for label, _ in cases}
    for r in range(rounds):
        for label, cmd in cases if r % 2 == 0 else cases[::-1]:
            p = subprocess.run(
                ["/usr/bin/time", "-f", "ALTERNATE %e %M", "bash", "-c", cmd],
                capture_output=True,
                text=True,
            )
            m = re.search(r"ALTERNATE ([\d.]+) (\d+)", p.stderr)
            if p.returncode != 0 or not m:
                print(f"{label}: run {r + 1} failed (exit {p.returncode}): {p.stderr[-300:]}")
                continue
            row = {"wall s": float(m.group(1)), "RSS MB": int(m.group(2)) / 1024}
            out = p.stdout + p.stderr
            for key, pat in [
                ("TIME ms", r"TIME ([\d.]+)"),
                ("GC ms", r'"gc_ms": ?([\d.]+)'),
                ("pause p50 us", r'"pause_p50_us": ?([\d.]+)'),
            ]:
                m = re.search(pat, out)
                if m:
                    row[key] = float(m.group(1))
            for key, v in row.items():
                got[label].setdefault(key, []).append(v)
    for label, _ in cases:
        parts = []
        for key, vs in got[label].items():
            parts.append(f"{key} {statistics.median(vs):.2f} [{min(vs):.2f}-{max(vs):.2f}]")
        n = len(got[label].get("wall s", []))
        print(f"{label}: n={n}  " + "  ".join(parts))


if __name__ == "__main__":
    main()
