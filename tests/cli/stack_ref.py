#!/usr/bin/env python3
"""Test-only reference for efipt top and flame.

Computes per-function exclusive/inclusive instruction counts, call counts and
folded stacks from a synthesizer's ground truth (one executed instruction
address per line) and an ELF's symbols, independently of efipt: functions from
`readelf -sW` (FUNC symbols; GCC's clone suffixes .part.N/.cold/.constprop.N/
.isra.N/.lto_priv.N fold into the function they came from, as DWARF names
them), instruction kinds and lengths from `objdump -d`, one step per
instruction. The stack model is the one docs/symbols.md describes.

With --inline, each frame is followed by the inline chain of the last
instruction it ran, from binutils `addr2line -i -f` ("name [inlined]",
outermost first), and counts go to the innermost frame.

usage: stack_ref.py ELF BASE IMAGE_NAME TRUTH OUT_TOP_CSV OUT_FOLDED [--inline]
"""
import bisect
import re
import subprocess
import sys

elf, base, image, truth, out_top, out_folded = sys.argv[1:7]
base = int(base, 0)
inline = sys.argv[7:] == ["--inline"]

# inline chains by RVA (outermost first), from addr2line over every address
chains = {}
if inline:
    rvas = set()
    with open(truth) as t:
        for line in t:
            if not line.startswith("["):
                rvas.add(int(line.split()[0], 16) - base)
    rvas = sorted(rvas)
    out = subprocess.run(["addr2line", "-a", "-i", "-f", "-e", elf],
                         input="".join("0x%x\n" % a for a in rvas), capture_output=True,
                         text=True, check=True).stdout.splitlines()
    i = 0
    while i < len(out):
        a = int(out[i], 16)
        i += 1
        names = []
        while i < len(out) and not out[i].startswith("0x"):
            names.append(out[i])   # function, then file:line
            i += 2
        # innermost first; the last is the concrete function
        chains[a] = tuple((image, n + " [inlined]") for n in reversed(names[:-1])
                          if n != "??")

# functions: (lo, hi, name, is_entry)
funcs = []
for line in subprocess.run(["readelf", "-sW", elf], capture_output=True, text=True,
                           check=True).stdout.splitlines():
    f = line.split()
    if len(f) < 8 or f[3] != "FUNC" or f[6] == "UND":
        continue
    lo, size = int(f[1], 16), int(f[2], 0)
    if size == 0:
        continue
    full = f[7].split("@")[0]
    name = full.split(".")[0] or full
    funcs.append((lo, lo + size, name, ".cold" not in full))
funcs.sort()
los = [f[0] for f in funcs]


def func_of(rva):
    i = bisect.bisect_right(los, rva) - 1
    if i >= 0 and rva < funcs[i][1]:
        return funcs[i][2], rva == funcs[i][0] and funcs[i][3]
    return "[unknown]", False


# instruction kinds and lengths
kind, length = {}, {}
prev = None
insn_re = re.compile(r"^\s*([0-9a-f]+):\s+(.*)$")
for line in subprocess.run(["objdump", "-d", "--no-show-raw-insn", "-M", "intel", elf],
                           capture_output=True, text=True, check=True).stdout.splitlines():
    m = insn_re.match(line)
    if not m:
        prev = None if not line.strip() else prev
        continue
    a = int(m.group(1), 16)
    words = m.group(2).split()
    while words and words[0] in ("bnd", "notrack", "repz", "rep", "repnz", "data16", "cs", "ds"):
        words = words[1:]
    op = words[0] if words else ""
    if op.startswith("call") or op.startswith("lcall") or op == "syscall":
        k = "call"
    elif op.startswith("ret") or op.startswith("lret") or op.startswith("iret") or op.startswith("sysret"):
        k = "ret"
    elif op.startswith("jmp") or op.startswith("ljmp"):
        # indirect (register or memory operand): a longjmp when it lands
        # where a frame returns
        k = "jmp" if len(words) > 1 and not re.match(r"^[0-9a-f]+$", words[1]) else "other"
    elif op.startswith("int"):
        k = "int"
    else:
        k = "other"
    kind[a] = k
    if prev is not None and a > prev:
        length[prev] = a - prev
    prev = a

# the model
FN_UNKNOWN_CALLER = ("", "[unknown caller]")
nodes = {}            # (parent, fn) -> id
node_fn = [None]
node_parent = [0]
node_count = [0]


def child(parent, fn):
    k = (parent, fn)
    if k not in nodes:
        nodes[k] = len(node_fn)
        node_fn.append(fn)
        node_parent.append(parent)
        node_count.append(0)
    return nodes[k]


stack = []  # [fn, node, ret or None, how]
excl, incl, calls, on, since = {}, {}, {}, {}, {}
T = 0


MAX_DEPTH = 1024  # deeper: every frame closes, the new one is the bottom


def enter(fn, how, ret):
    if len(stack) == MAX_DEPTH:
        while stack:
            leave()
    parent = 0
    if stack:
        parent = stack[-1][5]
    if how == "unknown_caller":
        parent = child(0, FN_UNKNOWN_CALLER)
    node = child(parent, fn)
    stack.append([fn, node, ret, how, (), node])
    if how in ("call", "tail", "int"):
        calls[fn] = calls.get(fn, 0) + 1
    if on.get(fn, 0) == 0:
        since[fn] = T
    on[fn] = on.get(fn, 0) + 1


def off(fn):
    on[fn] -= 1
    if on[fn] == 0:
        incl[fn] = incl.get(fn, 0) + T - since[fn]


def leave():
    f = stack.pop()
    for g in reversed(f[4]):
        off(g)
    off(f[0])


def set_chain(c):
    """The top frame's inline chain is now c (from instruction T on)."""
    top = stack[-1]
    if c == top[4]:
        return
    p = 0
    while p < len(c) and p < len(top[4]) and c[p] == top[4][p]:
        p += 1
    for g in reversed(top[4][p:]):
        off(g)
    for g in c[p:]:
        if on.get(g, 0) == 0:
            since[g] = T
        on[g] = on.get(g, 0) + 1
    top[4] = c
    n = top[1]
    for g in c:
        n = child(n, g)
    top[5] = n


def set_top(fn, entry):
    if stack[-1][0] == fn:
        return
    old = stack[-1]
    leave()
    if old[3] == "unknown_caller":
        how = "unknown_caller"
    elif old[3] == "root" and not stack:
        how = "root"
    else:
        how = "tail" if entry else "jump"
    enter(fn, how, old[2])


prev_rva = None   # the instruction before (RVA: kinds are keyed by it)
prev_end = None   # its absolute fall-through address


def arrive(ip):
    """Control reached ip: the transfer the previous instruction made."""
    global prev_rva
    name, entry = func_of(ip - base)
    fn = (image, name)
    if not stack:
        enter(fn, "root", None)
        prev_rva = None
        return
    if prev_rva is None:
        set_top(fn, entry)
        return
    k = kind.get(prev_rva, "other")
    prev_rva = None
    if k in ("call", "int") and ip != prev_end:
        enter(fn, k, prev_end)
        return
    if k == "jmp" and not any(f[2] == ip for f in stack):
        k = "other"
    if k in ("ret", "jmp"):
        j = -1
        for i in range(len(stack) - 1, -1, -1):
            if stack[i][2] == ip:
                j = i
                break
        if j >= 0:
            while len(stack) > j:
                leave()
            if not stack:
                enter(fn, "root", None)
                return
        elif len(stack) > 1:
            leave()
        else:
            leave()
            enter(fn, "unknown_caller", None)
            return
    set_top(fn, entry)


# TRUTH: the synthesizer's addresses, or a listing with events in brackets
# ("[interrupt, from: X, to: Y]", "[overflow...]", "[disabled...]")
ev_re = re.compile(r"^\[(?:[0-9a-f]+ )?([a-z. ]+)(?:, from: ([0-9a-f]+), to: ([0-9a-f]+))?")
with open(truth) as t:
    for line in t:
        if line.startswith("["):
            m = ev_re.match(line)
            what = m.group(1) if m else "error"
            if what == "interrupt":
                frm, to = int(m.group(2), 16), int(m.group(3), 16)
                if stack:
                    arrive(frm)
                name, entry = func_of(to - base)
                if stack:
                    enter((image, name), "int", frm)
                else:
                    enter((image, name), "root", None)
                prev_rva = None
            elif what in ("disabled", "async disabled", "overflow", "gap") or "error" in line:
                while stack:
                    leave()
                prev_rva = None
            continue
        ip = int(line.split()[0], 16)
        arrive(ip)
        set_chain(chains.get(ip - base, ()))
        fn = stack[-1][4][-1] if stack[-1][4] else stack[-1][0]
        excl[fn] = excl.get(fn, 0) + 1
        node_count[stack[-1][5]] += 1
        T += 1
        prev_rva = ip - base
        prev_end = ip + length.get(prev_rva, 0)
while stack:
    leave()

with open(out_top, "w") as o:
    o.write("image,function,excl,incl,calls\n")
    for fn in sorted(set(excl) | set(incl)):
        o.write('"%s","%s",%d,%d,%d\n' % (fn[0], fn[1], excl.get(fn, 0), incl.get(fn, 0),
                                         calls.get(fn, 0)))


def label(fn):
    if fn[1].endswith(" [inlined]"):
        return fn[1]
    return "%s`%s" % fn if fn[0] else fn[1]


with open(out_folded, "w") as o:
    for n in range(1, len(node_fn)):
        if not node_count[n]:
            continue
        path = []
        m = n
        while m:
            path.append(label(node_fn[m]))
            m = node_parent[m]
        o.write("%s %d\n" % (";".join(reversed(path)), node_count[n]))
