#!/usr/bin/env python3
"""Compare an lcov tracefile's line hits and branches with an independent reference.

usage: lcov_ref.py TRACEFILE.info SYMFILE BASE TRUTH [--bounds]

The reference: the line table as binutils prints it (objdump
--dwarf=decodedline: file, line, address, is_stmt; rows outside the code
sections of objdump -h are of discarded code). Every instruction objdump -d
disassembles in a sequence of rows (from its first row to its end, the row
with line '-'; one starting in code) belongs to the
lines of the is_stmt rows at the highest address at or below it; a line's
count is the executions of its most-executed instruction in the
synthesizer's ground truth (one executed instruction address per line, hex);
0 for a line without such instructions. A line with conditional branches
(below) counts instead the decisions (taken + not taken) of its most-decided
branch; with --bounds it may exceed that by the unknown ones. Files are compared by base
name (objdump prints no directories); a base name that two source files share
is left out. Functions: per (file, line), the FNDA counts of the FN records there add
up to the executions of the entries of the ELF function symbols (readelf
-s: FUNC, with a size; not GCC's NAME.cold parts) whose entry
has an is_stmt row, at that row's line, or at the least line of the
function's own is_stmt rows (its symbol's range, the entry's file) from its
declaration's on (objdump --dwarf=info: DW_AT_decl_line of the subprogram at
that address, or of its origin) where that comes first (names
are not compared: DWARF and ELF name a compiler's clones differently). A
function that also runs inlined (DW_TAG_inlined_subroutine's origin), or
only does, may count more: at least its entries' executions. Also checks the totals (LF/LH, FNF/FNH, BRF/BRH) against the records.

Branches: every conditional branch objdump -d disassembles (j* but jmp,
j*cxz, loop*) in a function whose entry has an is_stmt row, on the line of
the last is_stmt row at or below it; BLOCK numbers a line's branches by
address, BRANCH 0 is taken, 1 not taken. In the truth, the address after the
branch's says which: its target or its fall-through; anything else (an
interrupt came first) is unknown; a branch the run ended at counts for its
line, and its way may be in the trace: either way may count it once. Each BRDA must equal that count ('-' when
the branch never ran and its line did not either, 0 when only the branch
did not: lcov 2 refuses a line that ran whose branches are all '-'); with --bounds (interrupts in the trace) it may exceed
the count by at most the unknown executions.
Prints "ok N lines, H hit, B branches, T taken" or the first difference;
exits 0 or 1.
"""
import collections
import bisect
import os
import re
import subprocess
import sys


def fail(msg):
    print("lcov: " + msg)
    sys.exit(1)


info, sym, base, truth = sys.argv[1], sys.argv[2], int(sys.argv[3], 0), sys.argv[4]
bounds = "--bounds" in sys.argv[5:]
# code sections: rows elsewhere are of code the linker discarded
code = []
hdr = subprocess.run(["objdump", "-h", sym], capture_output=True, text=True, check=True).stdout
hl = hdr.splitlines()
for i, ln in enumerate(hl[:-1]):
    f = ln.split()
    if len(f) >= 7 and f[0].isdigit() and "CODE" in hl[i + 1]:
        code.append((int(f[3], 16), int(f[3], 16) + int(f[2], 16)))
first = {}
stmt = []  # (address, table order, (base name, line)) of every is_stmt row
out = subprocess.run(["objdump", "--dwarf=decodedline", sym], capture_output=True,
                     text=True, check=True).stdout
seqs = []  # (first address, end address) of each sequence in code
seq_lo = None
for ln in out.splitlines():
    f = ln.split()
    if len(f) >= 3 and (f[1].isdigit() or f[1] == "-") and f[2].startswith("0x"):
        if seq_lo is None:
            seq_lo = int(f[2], 16)
        if f[1] == "-":
            if seq_lo < int(f[2], 16) and any(lo <= seq_lo < hi for lo, hi in code):
                seqs.append((seq_lo + base, int(f[2], 16) + base))
            seq_lo = None
    if len(f) < 4 or f[-1] != "x" or not f[1].isdigit() or not f[2].startswith("0x"):
        continue
    key = (os.path.basename(f[0]), int(f[1]))
    if not any(lo <= int(f[2], 16) < hi for lo, hi in code):
        continue
    a = int(f[2], 16) + base
    stmt.append((a, len(stmt), key))
    if key not in first or a < first[key]:
        first[key] = a
stmt.sort()
stmt_addr = [r[0] for r in stmt]
seqs.sort()
seq_addr = [s[0] for s in seqs]
runs = collections.Counter()
seq = []
with open(truth) as t:
    for ln in t:
        seq.append(int(ln, 16))
        runs[seq[-1]] += 1

# DWARF: each subprogram's declaration line by address; the names of the
# functions inlined somewhere
dies = {}
die = None
out = subprocess.run(["objdump", "--dwarf=info", sym], capture_output=True, text=True).stdout
for ln in out.splitlines():
    m = re.match(r"\s*<\d+><([0-9a-f]+)>: Abbrev Number: \d+ \((\w+)\)", ln)
    if m:
        die = dies[int(m.group(1), 16)] = {"tag": m.group(2)}
        continue
    m = re.match(r"\s*<[0-9a-f]+>\s+(DW_AT_\w+)\s*: (.*)", ln)
    if m and die is not None:
        die[m.group(1)] = m.group(2).strip()


def die_attr(d, key):
    for _ in range(8):
        if key in d:
            return d[key]
        ref = d.get("DW_AT_abstract_origin") or d.get("DW_AT_specification")
        if not ref or not ref.startswith("<0x") or int(ref[1:-1], 16) not in dies:
            return None
        d = dies[int(ref[1:-1], 16)]
    return None


decl_at = {}
inlined = set()
for d in dies.values():
    name = die_attr(d, "DW_AT_name")
    name = name.split("): ")[-1] if name else None
    if d["tag"] == "DW_TAG_inlined_subroutine" and name:
        inlined.add(name)
    elif d["tag"] == "DW_TAG_subprogram" and "DW_AT_low_pc" in d and die_attr(d, "DW_AT_decl_line"):
        decl_at[int(d["DW_AT_low_pc"], 16) + base] = int(die_attr(d, "DW_AT_decl_line"))

# functions: ELF function symbols (FUNC, with a size) whose entry has a row, at its first
# row's line (or an earlier line of its own rows, from its declaration's on);
# (base name, line) -> executions of the entries there
fn_want = collections.Counter()
syms = subprocess.run(["readelf", "-sW", sym], capture_output=True, text=True,
                      check=True).stdout
entries = {}
for ln in syms.splitlines():
    f = ln.split()  # Num: Value Size Type Bind Vis Ndx Name
    if (len(f) >= 8 and f[3] == "FUNC" and f[6] != "UND" and f[2].isdigit() and int(f[2]) and
            not f[7].endswith(".cold")):  # GCC's cold part of a function: no entry
        entries[int(f[1], 16) + base] = int(f[2])
for a, size in entries.items():
    e = bisect.bisect_left(stmt_addr, a)
    if e < len(stmt) and stmt_addr[e] == a:
        bn, line = stmt[e][2]
        while a in decl_at and e < len(stmt) and stmt_addr[e] < a + size:
            if stmt[e][2][0] == bn and decl_at[a] <= stmt[e][2][1] < line:
                line = stmt[e][2][1]
            e += 1
        fn_want[(bn, line)] += runs.get(a, 0)

# conditional branches: address -> (fall-through, target), per function
JCC_OTHER = {"jcxz", "jecxz", "jrcxz", "loop", "loope", "loopne", "loopz", "loopnz"}
branches = {}
line_max = collections.Counter()  # (base name, line) -> its most-executed instruction's count
entry = None
out = subprocess.run(["objdump", "-d", "-w", sym], capture_output=True, text=True,
                     check=True).stdout
for ln in out.splitlines():
    m = ln.split()
    if len(m) == 2 and m[1].startswith("<") and m[1].endswith(">:"):
        entry = int(m[0], 16) + base
        continue
    f = ln.split("\t")
    if len(f) < 3 or not f[0].strip().endswith(":"):
        continue
    a = int(f[0].strip()[:-1], 16) + base
    size = len(f[1].split())
    ops = f[2].split()
    while ops and ops[0] in ("bnd", "notrack", "cs", "ds"):
        ops = ops[1:]
    if not ops:
        continue
    q = bisect.bisect_right(seq_addr, a)
    if q and a < seqs[q - 1][1]:
        i = bisect.bisect_right(stmt_addr, a)
        j = bisect.bisect_left(stmt_addr, stmt_addr[i - 1]) if i else i
        for r in stmt[j:i]:
            line_max[r[2]] = max(line_max[r[2]], runs.get(a, 0))
    mn = ops[0].split(",")[0]
    if (mn.startswith("j") and mn != "jmp") or mn in JCC_OTHER:
        e = bisect.bisect_left(stmt_addr, entry) if entry is not None else len(stmt)
        if e < len(stmt) and stmt_addr[e] == entry:
            branches[a] = (a + size, int(ops[1], 16) + base)
bkey = {}
for a in branches:
    i = bisect.bisect_right(stmt_addr, a)
    if i:
        bkey[a] = stmt[i - 1][2]
per_line = collections.defaultdict(list)
for a in sorted(bkey):
    per_line[bkey[a]].append(a)
execs, taken, fall, unknown, last = (collections.Counter() for _ in range(5))
for i, a in enumerate(seq):
    if a not in bkey:
        continue
    execs[a] += 1
    nxt = seq[i + 1] if i + 1 < len(seq) else None
    if nxt is None:
        last[a] += 1  # the run ended at it: it ran, its way is in no trace
    elif nxt == branches[a][0]:
        fall[a] += 1
    elif nxt == branches[a][1]:
        taken[a] += 1
    else:
        unknown[a] += 1

got = {}
brda = {}
fn_line = {}
fn_got = collections.Counter()
fn_inl = set()  # (base name, line) of functions that also run inlined
paths = collections.defaultdict(set)
sf = None
da = fn = 0
lh = fnh = 0
with open(info) as f:
    for ln in f:
        ln = ln.rstrip("\n")
        tag, _, val = ln.partition(":")
        if tag == "SF":
            sf, da, lh, fn, fnh, br, brh = val, 0, 0, 0, 0, 0, 0
            fns = set()
            paths[os.path.basename(val)].add(val)
        elif tag == "DA":
            line, count = (int(x) for x in val.split(",")[:2])
            got[(os.path.basename(sf), line)] = got.get((os.path.basename(sf), line), 0) + count
            da += 1
            lh += count > 0
        elif tag == "BRDA":
            line, blk, branch, count = val.split(",")
            k = (os.path.basename(sf), int(line), int(blk), int(branch))
            if k in brda:
                fail("%s: BRDA %s twice" % (sf, val))
            brda[k] = count
            br += 1
            brh += count not in ("-", "0")
        elif tag == "FN":
            name = val.split(",", 1)[1]
            if name in fns:
                fail("%s: FN %s twice (lcov knows functions by name)" % (sf, name))
            fns.add(name)
            fn_line[(sf, name)] = int(val.split(",", 1)[0])
            if name.split("@0x")[0] in inlined:
                fn_inl.add((os.path.basename(sf), fn_line[(sf, name)]))
        elif tag == "FNDA":
            name = val.split(",", 1)[1]
            if (sf, name) in fn_line:
                fn_got[(os.path.basename(sf), fn_line[(sf, name)])] += int(val.split(",")[0])
            fn += 1
            fnh += int(val.split(",")[0]) > 0
        elif tag in ("LF", "LH", "FNF", "FNH", "BRF", "BRH"):
            want = {"LF": da, "LH": lh, "FNF": fn, "FNH": fnh, "BRF": br, "BRH": brh}[tag]
            if int(val) != want:
                fail("%s: %s:%s but the records count %d" % (sf, tag, val, want))
shared = {b for b, p in paths.items() if len(p) > 1}
# a line with branches: its most-decided branch's decisions
line_hi = dict(line_max)
for key, addrs in per_line.items():
    line_max[key] = max(taken[a] + fall[a] + last[a] for a in addrs)
    line_hi[key] = max(taken[a] + fall[a] + last[a] + (unknown[a] if bounds else 0) for a in addrs)
n = hit = 0
for key, a in sorted(first.items()):
    if key[0] in shared:
        continue
    if key[0] not in paths:
        fail("%s:%d: not in the tracefile" % key)
    want = line_max.get(key, 0)
    g = got.get(key)
    if g is None or g < want or g > line_hi.get(key, 0):
        fail("%s:%d: %s hits, the reference %d%s (address 0x%x)" %
             (key[0], key[1], g, want,
              "" if line_hi.get(key, 0) == want else " to %d" % line_hi[key], a))
    want = g
    n += 1
    hit += want > 0
extra = [k for k in got if k[0] not in shared and k not in first]
if extra:
    fail("lines the reference does not have: %s" % extra[:5])
if not hit:
    fail("no line hit: nothing compared")
for key in sorted(set(fn_want) | set(fn_got)):
    if key[0] in shared:
        continue
    if key in fn_inl and key in fn_got and fn_got[key] >= fn_want.get(key, 0):
        continue
    if key not in fn_got or key not in fn_want or fn_got[key] != fn_want[key]:
        fail("%s:%d: functions there entered %s times, the reference %s" %
             (key + (fn_got.get(key, "no FN:"), fn_want.get(key, "no function"))))
nfn = sum(1 for k in fn_want if k[0] not in shared)
nb = nt = 0
want_keys = set()
for key, addrs in per_line.items():
    if key[0] in shared:
        continue
    for blk, a in enumerate(addrs):
        # where the run ended at the branch, the trace may still say its
        # way (the synthesizer wrote its TNT bit): one more for either way
        slack = last[a] + (unknown[a] if bounds else 0)
        over = 0
        for branch, known in ((0, taken[a]), (1, fall[a])):
            k = key + (blk, branch)
            want_keys.add(k)
            g = brda.get(k)
            if g is None:
                fail("%s:%d: branch at 0x%x (block %d) not in the tracefile" % (key + (a, blk)))
            if not execs[a]:
                line_ran = got.get(key, 0) > 0
                if g != ("0" if line_ran else "-"):
                    fail("BRDA:%d,%d,%d,%s in %s: the branch at 0x%x never ran (%s)" %
                         (key[1], blk, branch, g, key[0], a,
                          "0: its line did" if line_ran else "'-'"))
                continue
            if g == "-" or int(g) < known or int(g) > known + slack:
                fail("BRDA:%d,%d,%d,%s in %s: the reference %d%s (branch at 0x%x)" %
                     (key[1], blk, branch, g, key[0], known,
                      " + up to %d unknown" % slack if slack else "", a))
            over += int(g) - known
            if over > slack:
                fail("BRDA:%d,%d in %s: both ways %d more than the reference, "
                     "up to %d unknown (branch at 0x%x)" % (key[1], blk, key[0], over, slack, a))
            nb += 1
            nt += int(g) > 0
extra = [k for k in brda if k[0] not in shared and k not in want_keys]
if extra:
    fail("branches the reference does not have: %s" % extra[:5])
if not nt:
    fail("no branch taken: nothing compared")
print("ok %d lines, %d hit, %d function lines, %d branches executed, %d taken" %
      (n, hit, nfn, nb, nt))
