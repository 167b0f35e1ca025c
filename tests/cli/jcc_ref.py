#!/usr/bin/env python3
"""The conditional branches a ground truth executed, independently of efipt.

usage: jcc_ref.py TRUTH SYMFILE BASE

Conditional branches are what objdump -d disassembles as j* but jmp,
j*cxz and loop* in SYMFILE (loaded at BASE). In the truth (one executed
address per line, hex), the address after a branch's says which way it
went: its target (taken) or its fall-through (not taken); anything else
(an interrupt came first) says nothing. Prints "EXECUTED TAKEN NOT_TAKEN
BOTH": distinct branches executed, seen taken, seen not taken, seen both.
"""
import subprocess
import sys

truth, sym, base = sys.argv[1], sys.argv[2], int(sys.argv[3], 0)
OTHER = {"jcxz", "jecxz", "jrcxz", "loop", "loope", "loopne", "loopz", "loopnz"}
jcc = {}
out = subprocess.run(["objdump", "-d", "-w", sym], capture_output=True, text=True,
                     check=True).stdout
for ln in out.splitlines():
    f = ln.split("\t")
    if len(f) < 3 or not f[0].strip().endswith(":"):
        continue
    ops = f[2].split()
    while ops and ops[0] in ("bnd", "notrack", "cs", "ds"):
        ops = ops[1:]
    if len(ops) < 2:
        continue
    mn = ops[0].split(",")[0]
    if (mn.startswith("j") and mn != "jmp") or mn in OTHER:
        a = int(f[0].strip()[:-1], 16) + base
        jcc[a] = (a + len(f[1].split()), int(ops[1], 16) + base)
seq = [int(ln, 16) for ln in open(truth)]
ran, taken, fell = set(), set(), set()
for i, a in enumerate(seq):
    if a in jcc:
        ran.add(a)
        nxt = seq[i + 1] if i + 1 < len(seq) else None
        if nxt == jcc[a][0]:
            fell.add(a)
        elif nxt == jcc[a][1]:
            taken.add(a)
print(len(ran), len(taken), len(fell), len(taken & fell))
