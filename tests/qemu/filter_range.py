#!/usr/bin/env python3
"""filter_range.py INSN.TXT NEED: a stretch of code for --filter A-B, chosen
from the instructions a first run executed (efipt insn listing, with
disassembly), so that the filter test fits the firmware being booted.

[A, B] is entered and left only by taken transfers (A one's target, B an
unconditional JMP, CALL or RET): where a range is entered or left by the next sequential
instruction, FilterEn changes only at the next transfer (SDM 33.2.5.3),
which this test does not mean to exercise. Of those whose instructions, in
the order run, reach NEED executions inside, the one entered most often
before NEED is printed as "A-B"; none: exit status 1."""
import sys

MAX_LEN = 15  # longest x86 instruction: nothing within it before A falls into A


def main():
    path, need = sys.argv[1], int(sys.argv[2])
    ips, jumps = [], []
    for line in open(path):
        if line.startswith('['):
            continue
        w = line.split(None, 2)
        if len(w) < 2:
            continue
        ips.append(int(w[0], 16))
        jumps.append(w[1] in ('jmp', 'ret', 'call'))
    # a transfer that cannot be the next sequential instruction
    taken = [False] + [j or not p < i <= p + MAX_LEN for p, i, j in zip(ips, ips[1:], jumps)]
    ends_at = {ip for ip, j in zip(ips, jumps) if j}
    # entry points: targets of taken transfers, ranked by how often
    hits = {}
    for ip, t in zip(ips, taken):
        if t:
            hits[ip] = hits.get(ip, 0) + 1
    best = None
    for a in sorted(hits, key=hits.get, reverse=True)[:40]:
        for b in sorted(e for e in ends_at if a <= e < a + 0x200)[:6]:
            score = count(ips, taken, a, b, need)
            if score and (best is None or score > best[0]):
                best = (score, a, b)
    if best is None:
        print('no stretch entered and left by branches only runs %d times' % need, file=sys.stderr)
        return 1
    print('%#x-%#x' % (best[1], best[2]))
    return 0


def count(ips, taken, a, b, need):
    """entries into [a, b] before need instructions ran inside it; 0 when
    it is entered or left otherwise than by a taken transfer, or runs fewer"""
    inside, entries, was = 0, 0, False
    for ip, t in zip(ips, taken):
        now = a <= ip <= b
        if now != was and not t:
            return 0
        if now:
            entries += not was
            inside += 1
            if inside == need:
                return entries
        was = now
    return 0


if __name__ == '__main__':
    sys.exit(main())
