"""Medians and ratios of a side-by-side comparison's runs.

Reads lines "<program> <threads> <metric> <value>" (one per run) and
prints each (program, threads, metric)'s median with its runs, then
mine/peer for every program in MINE and peer in PEERS measured with the
same threads and metric.
  python3 tools/bench/medians.py FILE MINE[,MINE...] PEER[,PEER...]
"""
import collections
import statistics
import sys

runs = collections.defaultdict(list)
for line in open(sys.argv[1]):
    name, t, metric, value = line.split()
    runs[(name, t, metric)].append(float(value))
med = {k: statistics.median(v) for k, v in runs.items()}
print("%-12s %2s %-12s %10s   (runs)" % ("program", "T", "metric", "median"))
for k in sorted(med):
    print("%-12s %2s %-12s %10.3f   %s" % (*k, med[k], runs[k]))
print("\nratios (times: < 1 is faster than the peer; GFLOP/s: > 1 is faster)")
for name in sys.argv[2].split(","):
    for (prog, t, metric), m in sorted(med.items()):
        if prog != name:
            continue
        for peer in sys.argv[3].split(","):
            p = med.get((peer, t, metric))
            if p:
                print("%-8s T=%s %-12s / %-12s %.2f" % (name, t, metric, peer,
                                                         m / p))
