#!/usr/bin/env python3
"""Where a process's peak RSS is: runs the command, samples
/proc/PID/smaps every 20 ms, and prints the resident KB per mapping
(named by file, or [anon] with the mapping's size) at the sample with the
highest total.

Usage: scripts/peak-smaps.py COMMAND [ARGS...]   (environment passed on,
e.g. LD_LIBRARY_PATH=target/dropin/lib for the drop-in)"""
import collections
import os
import re
import subprocess
import sys
import time


def sample(pid):
    maps = collections.Counter()
    cur = None
    with open(f"/proc/{pid}/smaps") as f:
        for line in f:
            m = re.match(r"^([0-9a-f]+)-([0-9a-f]+) ", line)
            if m:
                parts = line.split()
                name = os.path.basename(parts[5]) if len(parts) > 5 else "[anon]"
                size = int(m.group(2), 16) - int(m.group(1), 16)
                cur = f"{name} ({size >> 20} MiB mapping)"
            elif line.startswith("Rss:"):
                maps[cur] += int(line.split()[1])
    return maps


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    p = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    best, best_total = collections.Counter(), 0
    while p.poll() is None:
        try:
            maps = sample(p.pid)
        except OSError:
            break
        total = sum(maps.values())
        if total > best_total:
            best, best_total = maps, total
        time.sleep(0.02)
    print(f"peak resident: {best_total} KB")
    for name, kb in best.most_common(12):
        print(f"{kb:8d} KB  {name}")


if __name__ == "__main__":
    main()
