#!/usr/bin/env python3
"""What flushing a phase's writes to the disk would cost the Stop hook.

A mid-debate phase writes about four small files (the commit's new objects, the ref, the live
state). This writes four 2 kB files in a folder on the disk given (default: the current
folder), 60 times, with and without an fsync of each file and of the folder, and prints the
medians. Usage: python3 benches/fsync-cost.py [DIR]
"""
import os
import statistics
import sys
import tempfile
import time

base = tempfile.mkdtemp(dir=sys.argv[1] if len(sys.argv) > 1 else ".")
timings = {True: [], False: []}
for i in range(60):
    for flush in (True, False):
        began = time.perf_counter()
        for j in range(4):
            fd = os.open(f"{base}/{flush}-{i}-{j}", os.O_WRONLY | os.O_CREAT, 0o644)
            os.write(fd, b"x" * 2000)
            if flush:
                os.fsync(fd)
            os.close(fd)
        if flush:
            folder = os.open(base, os.O_RDONLY)
            os.fsync(folder)
            os.close(folder)
        timings[flush].append(time.perf_counter() - began)
for flush in (True, False):
    for name in os.listdir(base):
        os.remove(os.path.join(base, name))
os.rmdir(base)
with_sync = statistics.median(timings[True]) * 1000
without = statistics.median(timings[False]) * 1000
print(f"four files: {with_sync:.2f} ms with fsync, {without:.2f} ms without ({with_sync / without:.1f}x)")
