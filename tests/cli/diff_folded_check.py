#!/usr/bin/env python3
"""Test-only: check efipt diff --folded against efipt flame of each run.

usage: diff_folded_check.py DIFF_FOLDED FLAME_A FLAME_B [TOTAL_A TOTAL_B]

Every "stack countA countB" line must be unique, the stacks those of either
flame output, and each count that stack's count in flame of that run (0 where
it did not run); with TOTAL_A/TOTAL_B, the counts must add up to them.
Exit 0, or 1 with the first difference on stderr.
"""
import sys


def fold(path):
    d = {}
    for line in open(path):
        s, n = line.rstrip("\n").rsplit(" ", 1)
        d[s] = d.get(s, 0) + int(n)
    return d


got = {}
for line in open(sys.argv[1]):
    s, a, b = line.rstrip("\n").rsplit(" ", 2)
    if s in got:
        sys.exit("stack twice: " + s)
    got[s] = (int(a), int(b))
fa, fb = fold(sys.argv[2]), fold(sys.argv[3])
if not fa or not fb:
    sys.exit("a flame output is empty")
if set(got) != set(fa) | set(fb):
    sys.exit("stacks differ: %s" % sorted(set(got) ^ (set(fa) | set(fb)))[:3])
for s, (a, b) in got.items():
    if (a, b) != (fa.get(s, 0), fb.get(s, 0)):
        sys.exit("%s: %d %d, flame %d %d" % (s, a, b, fa.get(s, 0), fb.get(s, 0)))
if len(sys.argv) > 5:
    ta, tb = sum(a for a, b in got.values()), sum(b for a, b in got.values())
    if (ta, tb) != (int(sys.argv[4]), int(sys.argv[5])):
        sys.exit("totals %d %d" % (ta, tb))
