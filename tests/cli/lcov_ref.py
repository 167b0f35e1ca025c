#!/usr/bin/env python3
"""Compare an lcov tracefile's line hits with an independent reference.

usage: lcov_ref.py TRACEFILE.info SYMFILE BASE TRUTH

The reference: the line table as binutils prints it (objdump
--dwarf=decodedline: file, line, address, is_stmt), each (file, line) at the
lowest address of its is_stmt rows, counted in the synthesizer's ground truth
(one executed instruction address per line, hex). Files are compared by base
name (objdump prints no directories); a base name that two source files share
is left out. Also checks the totals (LF/LH, FNF/FNH) against the records.
Prints "ok N lines, H hit" or the first difference; exits 0 or 1.
"""
import collections
import os
import subprocess
import sys


def fail(msg):
    print("lcov: " + msg)
    sys.exit(1)


info, sym, base, truth = sys.argv[1], sys.argv[2], int(sys.argv[3], 0), sys.argv[4]
first = {}
out = subprocess.run(["objdump", "--dwarf=decodedline", sym], capture_output=True,
                     text=True, check=True).stdout
for ln in out.splitlines():
    f = ln.split()
    if len(f) < 4 or f[-1] != "x" or not f[1].isdigit() or not f[2].startswith("0x"):
        continue
    key = (os.path.basename(f[0]), int(f[1]))
    a = int(f[2], 16) + base
    if key not in first or a < first[key]:
        first[key] = a
runs = collections.Counter()
with open(truth) as t:
    for ln in t:
        runs[int(ln, 16)] += 1

got = {}
paths = collections.defaultdict(set)
sf = None
da = fn = 0
lh = fnh = 0
with open(info) as f:
    for ln in f:
        ln = ln.rstrip("\n")
        tag, _, val = ln.partition(":")
        if tag == "SF":
            sf, da, lh, fn, fnh = val, 0, 0, 0, 0
            paths[os.path.basename(val)].add(val)
        elif tag == "DA":
            line, count = (int(x) for x in val.split(",")[:2])
            got[(os.path.basename(sf), line)] = got.get((os.path.basename(sf), line), 0) + count
            da += 1
            lh += count > 0
        elif tag == "FNDA":
            fn += 1
            fnh += int(val.split(",")[0]) > 0
        elif tag in ("LF", "LH", "FNF", "FNH"):
            want = {"LF": da, "LH": lh, "FNF": fn, "FNH": fnh}[tag]
            if int(val) != want:
                fail("%s: %s:%s but the records count %d" % (sf, tag, val, want))
shared = {b for b, p in paths.items() if len(p) > 1}
n = hit = 0
for key, a in sorted(first.items()):
    if key[0] in shared:
        continue
    if key[0] not in paths:
        fail("%s:%d: not in the tracefile" % key)
    want = runs.get(a, 0)
    if got.get(key) != want:
        fail("%s:%d: %s hits, the reference %d (address 0x%x)" % (key[0], key[1], got.get(key), want, a))
    n += 1
    hit += want > 0
extra = [k for k in got if k[0] not in shared and k not in first]
if extra:
    fail("lines the reference does not have: %s" % extra[:5])
if not hit:
    fail("no line hit: nothing compared")
print("ok %d lines, %d hit" % (n, hit))
