#!/usr/bin/env python3
"""An independent drcov version 2 reader for the tests.

drcov_check.py FILE [--truth TRUTH] [--union A B ...]
  checks the layout (header lines, module table, BB table size, blocks
  inside their modules, sizes 1..65535); with --truth, that every address of
  the ground truth (one hex address per line) inside a module lies in one of
  its blocks; with --union, that the covered bytes of each module (by path)
  are the union of those in the files A, B, ...
Prints what it found on stdout; exits 1 with the reason on failure."""
import sys


def fail(msg):
    print("drcov_check: " + msg)
    sys.exit(1)


def read(path):
    data = open(path, "rb").read()
    pos = 0

    def line():
        nonlocal pos
        end = data.find(b"\n", pos)
        if end < 0:
            fail("%s: header ends early" % path)
        text = data[pos:end].decode("utf-8")
        pos = end + 1
        return text

    if line() != "DRCOV VERSION: 2":
        fail("first line")
    if not line().startswith("DRCOV FLAVOR: "):
        fail("flavor line")
    mt = line()
    pre = "Module Table: version 2, count "
    if not mt.startswith(pre):
        fail("module table line: " + mt)
    count = int(mt[len(pre):])
    cols = line()
    if not cols.startswith("Columns: "):
        fail("columns line")
    cols = [c.strip() for c in cols[9:].split(",")]
    if cols[-1] != "path":
        fail("path is not the last column")
    col = {c: i for i, c in enumerate(cols)}
    mods = []
    for i in range(count):
        parts = [p.strip() for p in line().split(",", len(cols) - 1)]
        if len(parts) != len(cols) or int(parts[col["id"]]) != i:
            fail("module line %d" % i)
        base = int(parts[col.get("base", col.get("start"))], 16)
        end = int(parts[col["end"]], 16)
        entry = int(parts[col["entry"]], 16)
        if end < base or (entry and not base <= entry < end):
            fail("module %d range/entry" % i)
        mods.append((base, end, entry, parts[-1]))
    bt = line()
    if not (bt.startswith("BB Table: ") and bt.endswith(" bbs")):
        fail("BB table line: " + bt)
    nbb = int(bt[10:-4])
    if len(data) - pos != 8 * nbb:
        fail("BB table: %d bytes for %d blocks" % (len(data) - pos, nbb))
    blocks = []
    for i in range(nbb):
        e = data[pos + 8 * i: pos + 8 * i + 8]
        start = int.from_bytes(e[0:4], "little")
        size = int.from_bytes(e[4:6], "little")
        mid = int.from_bytes(e[6:8], "little")
        if mid >= count:
            fail("block %d: module id %d" % (i, mid))
        if not 1 <= size <= 65535:
            fail("block %d: size %d" % (i, size))
        base, end = mods[mid][0], mods[mid][1]
        if start + size > end - base:
            fail("block %d past its module" % i)
        blocks.append((mid, start, size))
    return mods, blocks


def covered(mods, blocks):
    """path -> set of covered offsets"""
    cov = {}
    for mid, start, size in blocks:
        cov.setdefault(mods[mid][3], set()).update(range(start, start + size))
    return cov


def main():
    args = sys.argv[1:]
    mods, blocks = read(args[0])
    print("modules %d blocks %d" % (len(mods), len(blocks)))
    if "--truth" in args:
        truth = args[args.index("--truth") + 1]
        inside = {}
        for mid, start, size in blocks:
            inside.setdefault(mid, set()).update(range(start, start + size))
        n = 0
        for ip in {int(ln, 16) for ln in open(truth)}:
            for mid, (base, end, _, path) in enumerate(mods):
                if base <= ip < end:
                    if ip - base not in inside.get(mid, ()):
                        fail("executed 0x%x (%s+0x%x) is in no block" % (ip, path, ip - base))
                    n += 1
        print("distinct executed instructions covered %d" % n)
    if "--union" in args:
        want = {}
        for f in args[args.index("--union") + 1:]:
            m, b = read(f)
            for path, offs in covered(m, b).items():
                want.setdefault(path, set()).update(offs)
        if covered(mods, blocks) != want:
            fail("covered bytes are not the union of the inputs")
        print("union of %d files" % (len(args) - args.index("--union") - 1))


main()
