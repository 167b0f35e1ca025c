#!/usr/bin/env python3
# usage: calls_paths.py CALLS-OUTPUT FOLDED-REFERENCE
#
# efipt calls (--inline) output: the stacks it enters, against the
# reference's folded stacks (those with instructions). Every folded stack
# must be entered, and a stack entered without instructions of its own must
# at once go deeper (an interrupt before its first instruction ran, or
# inline frames that its first instruction is in) or end in a gap. Exit
# status 1 if not.
import re
import sys

entries = []
stack = []
for line in open(sys.argv[1]):
    body = line[14:].rstrip("\n")
    if body.strip() == "-- gap --":
        entries.append(("gap", None))
        continue
    depth = (len(body) - len(body.lstrip(" "))) // 2
    how = re.search(r" \((root|tail call|jump|interrupt|unknown caller)\)$", body)
    name = body.strip()[: -len(how.group(0))] if how else body.strip()
    m = re.match(r"^(.+)\+0x[0-9a-f]+$", name)
    if m:
        name = m.group(1) + "`[unknown]"
    if name.startswith("[unknown] 0x"):
        name = "[unknown]"
    if how and how.group(1) == "unknown caller":
        name = "[unknown caller];" + name
    stack = stack[:depth] + [name]
    entries.append((";".join(stack), how.group(1) if how else "call"))
paths = set(p for p, h in entries if h)
folded = set(l.rsplit(" ", 1)[0] for l in open(sys.argv[2]) if l.strip())
missing = folded - paths
bad = []
for i, (p, h) in enumerate(entries):
    if h and p not in folded:
        nxt = entries[i + 1] if i + 1 < len(entries) else ("gap", None)
        if not nxt[0].startswith(p + ";") and nxt[0] != "gap":
            bad.append(p)
for p in sorted(missing)[:3]: print("never entered:", p[:200])
for p in bad[:3]: print("entered without instructions, and left:", p[:200])
print(len(paths), "stacks entered,", len(folded), "with instructions,", len(missing), "missing,", len(bad), "unexplained")
sys.exit(1 if missing or bad or not folded else 0)
