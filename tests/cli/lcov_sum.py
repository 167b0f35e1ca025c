#!/usr/bin/env python3
"""Check that an lcov tracefile is the sum of others, record by record.

usage: lcov_sum.py OUT.info IN.info...

Independent of efipt's merge: per SF, DA and FNDA counts add, FN lines are
the union, BRDA counts add with '-' + '-' = '-' and '-' + n = n; the
totals (FNF, FNH, BRF, BRH, LF, LH) must count OUT's own records. Prints
"ok N records" or the first difference; exits 0 or 1.
"""
import collections
import sys


def fail(msg):
    print("lcov_sum: " + msg)
    sys.exit(1)


def read(path):
    """{(sf, kind, key): value} and, per SF, the totals as written."""
    rec, totals, sf = {}, {}, None
    with open(path) as f:
        for ln in f:
            tag, _, val = ln.rstrip("\n").partition(":")
            if tag == "SF":
                sf = val
                totals.setdefault(sf, {})
            elif tag == "DA":
                line, count = val.split(",")[:2]
                rec[(sf, "DA", int(line))] = rec.get((sf, "DA", int(line)), 0) + int(count)
            elif tag == "FN":
                line, name = val.split(",", 1)
                rec.setdefault((sf, "FN", name), int(line))
            elif tag == "FNDA":
                count, name = val.split(",", 1)
                rec[(sf, "FNDA", name)] = rec.get((sf, "FNDA", name), 0) + int(count)
            elif tag == "BRDA":
                line, blk, br, taken = val.split(",")
                k = (sf, "BRDA", (int(line), int(blk), int(br)))
                old = rec.get(k, "-")
                rec[k] = taken if old == "-" else old if taken == "-" else int(old) + int(taken)
            elif tag in ("FNF", "FNH", "BRF", "BRH", "LF", "LH"):
                totals[sf][tag] = int(val)
    return rec, totals


out, totals = read(sys.argv[1])
want = {}
for path in sys.argv[2:]:
    rec, _ = read(path)
    for k, v in rec.items():
        if k[1] == "FN":
            want.setdefault(k, v)
        elif k[1] == "BRDA":
            old = want.get(k, "-")
            want[k] = v if old == "-" else old if v == "-" else int(old) + int(v)
        else:
            want[k] = want.get(k, 0) + v
for k in sorted(set(want) | set(out), key=str):
    g, w = out.get(k), want.get(k)
    if str(g) != str(w):
        fail("%s %s %s: %s, the sum of the inputs %s" % (k[0], k[1], k[2], g, w))
for sf, t in totals.items():
    recs = [(k, v) for k, v in out.items() if k[0] == sf]
    fnda = [v for k, v in recs if k[1] == "FNDA" and (sf, "FN", k[2]) in out]
    brda = [v for k, v in recs if k[1] == "BRDA"]
    da = [v for k, v in recs if k[1] == "DA"]
    count = {"FNF": sum(k[1] == "FN" for k, v in recs), "FNH": sum(v > 0 for v in fnda),
             "BRF": len(brda), "BRH": sum(v != "-" and int(v) > 0 for v in brda),
             "LF": len(da), "LH": sum(v > 0 for v in da)}
    for tag, v in t.items():
        if v != count[tag]:
            fail("%s: %s:%d, its records count %d" % (sf, tag, v, count[tag]))
print("ok %d records" % len(out))
