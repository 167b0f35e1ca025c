#!/usr/bin/env python3
"""Test-only reference for efipt top and flame.

Computes per-function exclusive/inclusive instruction counts, call counts and
folded stacks from a synthesizer's ground truth (one executed instruction
address per line) and an ELF's symbols, independently of efipt: functions from
`readelf -sW` (FUNC symbols; GCC's clone suffixes .part.N/.cold/.constprop.N/
.isra.N/.lto_priv.N fold into the function they came from, as DWARF names
them), instruction kinds and lengths from `objdump -d`, one step per
instruction. The stack model is the one docs/symbols.md describes.

With PACKETS (`efipt packets --format jsonl` of the trace) and TSC_HZ it
also computes each function's exclusive and inclusive time (excl_ns,
incl_ns columns) the way docs/symbols.md ("Time") defines it: the
instructions after a branch that takes a packet (a Jcc or compressed RET:
a TNT bit; an indirect branch, uncompressed RET or interrupt: a TIP) have
the time of the last TSC packet before the next packet of the flow when
that branch used up its packet (the decoder reads on to it before walking
on), else the time the branch had; when the time moves on, the difference
goes to the function on top of the stack. Packets are consumed by a walk of its own over the truth.

The folded stacks weighted by time (ns per call tree node) go to
OUT_FOLDED_NS ("-": none). With nom=N (the nominal ratio), CYC packets
count too: the time is the last TSC (or MTC) plus the cycles of the CYCs
since, converted at N / CBR TSC ticks per cycle. With mtc=FREQ,EAX,EBX
(IA32_RTIT_CTL.MTCFreq, CPUID.15H), MTCs count: the time at an MTC is the
TSC at the crystal clock edge it reports, counted from the TMA after the
last TSC (TSC - FastCounter at CTC[15:0]) at EBX / EAX TSC ticks per
crystal tick (SDM 33.8.3.2).

With from=F and/or to=T, OUT_TOP_CSV and the folded stacks hold the
window of instruction indexes [F, T) (top and flame --from F --to T):
each count and time at T less the one at F, taken before anything of
instruction F (or T) happens, the events that come before it and its time
included; a function on the stack counts its inclusive part from F on.

With --inline, each frame is followed by the inline chain of the last
instruction it ran, from binutils `addr2line -i -f` ("name [inlined]",
outermost first), and counts go to the innermost frame.


usage: stack_ref.py ELF BASE IMAGE_NAME TRUTH OUT_TOP_CSV OUT_FOLDED
                    [--inline | PACKETS TSC_HZ [OUT_FOLDED_NS [nom=N] [mtc=FREQ,EAX,EBX]
                     [from=F] [to=T]]]
"""
import json
import bisect
import re
import subprocess
import sys

elf, base, image, truth, out_top, out_folded = sys.argv[1:7]
packets_file = sys.argv[7] if len(sys.argv) > 8 else None
tsc_hz = int(sys.argv[8]) if packets_file else 0
out_folded_ns = sys.argv[9] if len(sys.argv) > 9 and sys.argv[9] != "-" else None
opts = dict(a.split("=", 1) for a in sys.argv[10:])
nom_freq = int(opts.get("nom", 0))
mtc_freq, ctc_eax, ctc_ebx = (int(x) for x in opts.get("mtc", "0,0,0").split(","))
win_from = int(opts.get("from", 0))
win_to = int(opts["to"]) if "to" in opts else None
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
kind, length, decide = {}, {}, {}
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
    # what the branch takes from the trace: a TNT bit, a TNT bit or a TIP
    # (a RET, compressed or not), a TIP; direct branches take nothing
    if op.startswith("j") and not op.startswith("jmp") or op.startswith("loop"):
        decide[a] = "tnt"
    elif op.startswith("ret"):
        decide[a] = "ret"
    elif k in ("call", "jmp") and len(words) > 1 and not re.match(r"^[0-9a-f]+$", words[1]):
        decide[a] = "tip"
    elif op.startswith(("lcall", "ljmp", "lret", "iret", "sysret", "syscall", "int")):
        decide[a] = "tip"
    if prev is not None and a > prev:
        length[prev] = a - prev
    prev = a

# the model
FN_UNKNOWN_CALLER = ("", "[unknown caller]")
nodes = {}            # (parent, fn) -> id
node_fn = [None]
node_parent = [0]
node_count = [0]
node_ticks = {}


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
excl_t, incl_t, since_t = {}, {}, {}
NOW = 0        # TSC: the time so far, never going back
timed = False


class Packets:
    """The trace's packets as the branches of the truth take them."""

    def __init__(self, path):
        self.p = []
        in_psb = False
        for line in open(path):
            j = json.loads(line)
            t = j["type"]
            if t == "psb":
                in_psb = True
            elif t == "psbend":
                in_psb = False
            if t == "tsc":
                self.p.append(("tsc", int(j["tsc"], 16)))
            elif t == "cyc":
                self.p.append(("cyc", int(j["cyc"], 16)))
            elif t == "cbr":
                self.p.append(("cbr", j["ratio"]))
            elif t == "tma":
                self.p.append(("tma", (j["ctc"], j["fc"])))
            elif t == "mtc":
                self.p.append(("mtc", j["ctc"]))
            elif t.startswith("tnt"):
                self.p.append(("tnt", len(j["bits"])))
            elif t in ("tip", "tip.pge", "tip.pgd") or (t == "fup" and not in_psb):
                self.p.append((t, 0))
        self.i = 0
        self.bits = 0
        self.tsc = None
        self.cbr = 0
        self.cyc = 0      # cycles since the last TSC

    def timing(self, t, v):
        """A timing packet: True if it was one."""
        if t == "tsc":
            self.tsc, self.base, self.cyc = v, v, 0
            self.edge = None
        elif t == "tma":
            if self.tsc is not None and self.edge is None:
                ctc, fc = v
                self.edge, self.tma_ctc, self.ticks, self.last_mtc = self.tsc - fc, ctc, 0, None
        elif t == "mtc":
            if mtc_freq and ctc_eax and getattr(self, "edge", None) is not None:
                if self.last_mtc is None:
                    bits = min(mtc_freq + 8, 16)
                    d = ((v << mtc_freq) - self.tma_ctc) % (1 << bits)
                else:
                    d = ((v - self.last_mtc) % 256) << mtc_freq
                self.last_mtc = v
                self.ticks += d
                self.tsc = self.base = self.edge + self.ticks * ctc_ebx // ctc_eax
                self.cyc = 0
        elif t == "cbr":
            self.cbr = v
        elif t == "cyc":
            if self.tsc is not None and self.cbr and nom_freq:
                self.cyc += v
                self.tsc = self.base + self.cyc * nom_freq // self.cbr
        else:
            return False
        return True

    def take(self, what):
        """Consume the next packet of a kind in what (TSCs on the way)."""
        while self.i < len(self.p):
            t, v = self.p[self.i]
            self.i += 1
            if self.timing(t, v):
                pass
            elif t in what:
                return t, v
        return None, 0

    def ahead(self):
        """With no TNT bits left the decoder reads on to the next packet
        of the flow before it walks on: the TSCs up to it count now."""
        while not self.bits and self.i < len(self.p) and self.timing(*self.p[self.i]):
            self.i += 1

    def branch(self, d):
        if d == "tnt" or (d == "ret" and self.bits):
            if not self.bits:
                _, self.bits = self.take(("tnt",))
            self.bits = max(self.bits - 1, 0)
        elif d == "ret":
            t, v = self.take(("tnt", "tip", "tip.pgd"))
            if t == "tnt":
                self.bits = v - 1
            elif t == "tip.pgd":
                return  # the disable event takes the time
        elif self.take(("tip", "tip.pgd"))[0] == "tip.pgd":
            return
        self.ahead()


pk = Packets(packets_file) if packets_file else None


def time_to(tsc):
    """The time is tsc: what moved on goes to the top of the stack."""
    global NOW, timed
    if tsc is None:
        return
    if not timed:
        NOW, timed = tsc, True
        for f in stack:
            since_t[f[0]] = NOW
        return
    if tsc > NOW:
        if stack:
            excl_t[stack[-1][0]] = excl_t.get(stack[-1][0], 0) + tsc - NOW
            node_ticks[stack[-1][1]] = node_ticks.get(stack[-1][1], 0) + tsc - NOW
        NOW = tsc


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
        since_t[fn] = NOW
    on[fn] = on.get(fn, 0) + 1


def off(fn):
    on[fn] -= 1
    if on[fn] == 0:
        incl[fn] = incl.get(fn, 0) + T - since[fn]
        incl_t[fn] = incl_t.get(fn, 0) + NOW - since_t[fn]


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
            since_t[g] = NOW
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


def snapshot():
    """Every function's counts and times so far (open frames' inclusive
    ones up to now)."""
    snap = {}
    for fn in set(excl) | set(incl) | set(on):
        open_ = on.get(fn, 0) > 0
        snap[fn] = (excl.get(fn, 0), incl.get(fn, 0) + (T - since[fn] if open_ else 0),
                    calls.get(fn, 0), excl_t.get(fn, 0),
                    incl_t.get(fn, 0) + (NOW - since_t[fn] if open_ and timed else 0))
    return snap, list(node_count), dict(node_ticks)


win_open = win_close = None
# TRUTH: the synthesizer's addresses, or a listing with events in brackets
# ("[interrupt, from: X, to: Y]", "[overflow...]", "[disabled...]")
ev_re = re.compile(r"^\[(?:[0-9a-f]+ )?([a-z. ]+)(?:, from: ([0-9a-f]+), to: ([0-9a-f]+))?")
with open(truth) as t:
    for line in t:
        if win_open is None and T >= win_from:
            win_open = snapshot()
        if win_close is None and win_to is not None and T >= win_to:
            win_close = snapshot()
        if line.startswith("["):
            m = ev_re.match(line)
            what = m.group(1) if m else "error"
            if what == "interrupt":
                frm, to = int(m.group(2), 16), int(m.group(3), 16)
                if pk:
                    pk.take(("fup",))
                    pk.take(("tip",))
                    time_to(pk.tsc)  # the interrupt event's time
                    pk.ahead()
                if stack:
                    arrive(frm)
                name, entry = func_of(to - base)
                if stack:
                    enter((image, name), "int", frm)
                else:
                    enter((image, name), "root", None)
                prev_rva = None
            elif what == "enabled" and pk:
                pk.take(("tip.pge",))
                time_to(pk.tsc)
                pk.ahead()
            elif what in ("disabled", "async disabled", "overflow", "gap") or "error" in line:
                if pk and what == "async disabled":
                    pk.take(("fup",))
                    pk.take(("tip.pgd",))
                if pk:
                    time_to(pk.tsc)
                while stack:
                    leave()
                prev_rva = None
            continue
        ip = int(line.split()[0], 16)
        if pk:
            time_to(pk.tsc)
        arrive(ip)
        set_chain(chains.get(ip - base, ()))
        fn = stack[-1][4][-1] if stack[-1][4] else stack[-1][0]
        excl[fn] = excl.get(fn, 0) + 1
        node_count[stack[-1][5]] += 1
        T += 1
        prev_rva = ip - base
        prev_end = ip + length.get(prev_rva, 0)
        if pk and prev_rva in decide:
            pk.branch(decide[prev_rva])
if win_open is None:
    win_open = snapshot()
while stack:
    leave()
if win_close is None:
    win_close = snapshot()

with open(out_top, "w") as o:
    o.write("image,function,excl,incl,calls%s\n" % (",excl_ns,incl_ns" if pk else ""))
    for fn in sorted(win_close[0]):
        a, b = win_open[0].get(fn, (0,) * 5), win_close[0][fn]
        d = [y - x for x, y in zip(a, b)]
        if not any(d[:3]):
            continue
        o.write('"%s","%s",%d,%d,%d' % (fn[0], fn[1], d[0], d[1], d[2]))
        if pk:
            o.write(",%d,%d" % (d[3] * 10**9 // tsc_hz, d[4] * 10**9 // tsc_hz))
        o.write("\n")


def label(fn):
    if fn[1].endswith(" [inlined]"):
        return fn[1]
    return "%s`%s" % fn if fn[0] else fn[1]


def write_folded(path, weight):
    """One line per call stack node of non-zero weight(n): its frames, root
    first, and the weight."""
    with open(path, "w") as o:
        for n in range(1, len(node_fn)):
            w = weight(n)
            if not w:
                continue
            frames = []
            m = n
            while m:
                frames.append(label(node_fn[m]))
                m = node_parent[m]
            o.write("%s %d\n" % (";".join(reversed(frames)), w))


def count_at(counts, n):
    """Node n's count in a snapshot's list (0: the node came later)."""
    return counts[n] if n < len(counts) else 0


def in_window(n):
    """Node n's instructions in the window."""
    return count_at(win_close[1], n) - count_at(win_open[1], n)


def ticks_in_window(n):
    return win_close[2].get(n, 0) - win_open[2].get(n, 0)


write_folded(out_folded, in_window)
if out_folded_ns:
    write_folded(out_folded_ns, lambda n: ticks_in_window(n) * 10**9 // tsc_hz)
