#!/usr/bin/env python3
"""Check the part of an execution an efipt-qemu.so trace holds against
insnlog.so's record of it (the logger's skip=0): for --size/--mode and
--filter, whose traces hold only some of the instructions executed.

usage: insnlog_part.py LOG INSN_OUTPUT MANIFEST prefix|suffix|filter [SKIP]

LOG, INSN_OUTPUT as for insnlog_cmp.py (consecutive repeats of one address
are one instruction on both sides). From the manifest's trace.first_call
on, the logged instructions up to trace.insns of them (those in the
trace.ranges for filter) are what was traced; the decoded ones must be
  prefix: the first of them (stop mode: the trace filled),
  suffix: the last of them (wrap mode: older trace overwritten),
  filter: all of them, in range (every range edge is crossed by a branch
          in this execution, checked: FilterEn changes at branches only).
SKIP: the logger's skip=N (its record starts at callback N); for filter,
N may lie past trace.first_call when nothing in range ran before it (an
in-range instruction before it would be decoded but not logged: differs).
Prints one line; exit status 0 if so."""
import json
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
from insnlog_cmp import collapse, read_log  # noqa: E402


def main():
    log_path, insn_path, man_path, how = sys.argv[1:5]
    skip = int(sys.argv[5]) if len(sys.argv) > 5 else 0
    log = read_log(log_path)
    tr = json.load(open(man_path))['trace']
    got = collapse([int(l, 16) for l in open(insn_path) if not l.startswith('[')])
    if skip > tr['first_call'] and how != 'filter':
        print('skip=%d is past the start of the trace' % skip)
        return 1
    want = collapse(log[max(tr['first_call'] - skip, 0):])
    if how == 'filter':
        ranges = [(int(r['a'], 16), int(r['b'], 16)) for r in tr['ranges']]
        inr = lambda a: any(lo <= a <= hi for lo, hi in ranges)
        for x, y in zip(want, want[1:]):
            if inr(x) != inr(y) and 0 < y - x <= 15:
                print('0x%x to 0x%x may cross a range edge without a branch: '
                      'choose other ranges' % (x, y))
                return 1
        want = collapse([a for a in want if inr(a)])
        out = [a for a in got if not inr(a)]
        if out:
            print('decoded 0x%x, out of the ranges' % out[0])
            return 1
    want = want[:tr['insns']]  # what was traced
    if not got:
        print('nothing decoded')
        return 1
    if how == 'filter' and len(got) != tr['insns']:
        print('decoded %d instructions, the manifest says %d' % (len(got), tr['insns']))
        return 1
    part = want[-len(got):] if how == 'suffix' else want[:len(got)]
    if part != got:
        i = next((i for i, (w, g) in enumerate(zip(part, got)) if w != g),
                 min(len(part), len(got)))
        print('%s: instruction %d of %d differs (logged %s, decoded %s)' %
              (how, i, len(got), hex(part[i]) if i < len(part) else '-',
               hex(got[i]) if i < len(got) else '-'))
        return 1
    print('%s: the %d decoded instructions are the logged ones (%d traced)' %
          (how, len(got), tr['insns']))
    return 0


sys.exit(main())
