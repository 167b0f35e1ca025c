#!/usr/bin/env python3
"""Compare the instructions `efipt insn --no-inst` decoded from an
efipt-qemu.so trace with insnlog.so's record of the same execution.

usage: insnlog_cmp.py LOG INSN_OUTPUT MANIFEST SKIP [--drop K | --whole | --head | --cpu N] [--events]

LOG holds 8-byte addresses, one per execution callback, the first SKIP left
out; the manifest's trace.first_call says where the trace starts in it.
Consecutive repeats of one address are one instruction on both sides (a REP
string instruction runs one callback per iteration). --drop K removes the
K-th logged instruction first (the check that a difference is found);
--whole requires the log to end where the trace does (QEMU ended there);
--head takes INSN_OUTPUT as the trace's first instructions only (a window
of a longer trace: its length is not the manifest's); --cpu N compares CPU
N's trace (the manifest's trace.traces entry) with LOG, that CPU's record.
Where the two differ by design: the log has every instruction whose
callback ran, INT n/INT3/INTO/INT1 and UD0/UD1/UD2 (#UD) included, while
the trace reports those at their event's FUP, not as executed (SDM Table
33-23; docs/qemu.md): a window that runs one differs at it. The OVMF
windows compared here run none (t_qemu_reset.sh checks a whole boot).
--events takes those in: at an event of INSN_OUTPUT ("[interrupt, from:
X, to: Y]") where the log runs X, then Y (the instruction raised the event
itself: it is no asynchronous one, whose X runs after the handler), X is
the event's and not among the decoded instructions.
Prints one line; exit status 0 if the decoded instructions are exactly the
logged ones from first_call on, as many as the manifest's trace.insns."""
import json
import struct
import sys


def collapse(seq):
    out = []
    for a in seq:
        if not out or out[-1] != a:
            out.append(a)
    return out


def read_log(path):
    """insnlog.so's record: the 8-byte addresses of a log file."""
    raw = open(path, 'rb').read()
    return struct.unpack('<%dQ' % (len(raw) // 8), raw[:len(raw) // 8 * 8])


def main():
    events = '--events' in sys.argv[5:]
    if events:
        sys.argv.remove('--events')
    log_path, insn_path, man_path, skip = sys.argv[1:5]
    drop = int(sys.argv[6]) if len(sys.argv) > 6 and sys.argv[5] == '--drop' else None
    whole = len(sys.argv) > 5 and sys.argv[5] == '--whole'
    head = len(sys.argv) > 5 and sys.argv[5] == '--head'
    log = read_log(log_path)
    tr = json.load(open(man_path))['trace']
    if len(sys.argv) > 6 and sys.argv[5] == '--cpu':
        tr = [t for t in tr['traces'] if t['cpu'] == int(sys.argv[6])][0]
    start = tr['first_call'] - int(skip)
    if start < 0 or start >= len(log) or log[start] != int(tr['first_ip'], 16):
        print('trace starts at call %d (%s), not in the log' % (tr['first_call'], tr['first_ip']))
        return 1
    want = collapse(log[start:])
    if drop is not None:
        del want[drop]
    got = []  # with --events, (X, Y) at each event between the instructions
    for line in open(insn_path):
        line = line.strip()
        if not line.startswith('['):
            got.append(int(line, 16))
        elif events and line.startswith('[interrupt, from: '):
            x, y = line[len('[interrupt, from: '):].rstrip(']').split(', to: ')
            got.append((int(x, 16), int(y, 16)))
    n_got = sum(1 for g in got if not isinstance(g, tuple))
    if head and (not n_got or n_got > tr['insns']):
        print('decoded %d instructions as the window, the trace has %d' % (n_got, tr['insns']))
        return 1
    if not head and n_got != tr['insns']:
        print('decoded %d instructions, the manifest says %d' % (n_got, tr['insns']))
        return 1
    got = collapse(got)
    if events:
        # the log's instructions that raised the events, out of it
        keep, i = [], 0
        for g in got:
            if isinstance(g, tuple):
                if want[i:i + 2] == list(g):
                    i += 1
                continue
            keep.append(i)
            i += 1
        raised = len(want[:i]) - len(keep)
        want = [want[k] for k in keep if k < len(want)] + list(want[i:])
        got = [g for g in got if not isinstance(g, tuple)]
        print('%d instructions raised their own events; ' % raised, end='')
    if len(want) < len(got):
        print('decoded %d instructions, the log has only %d' % (len(got), len(want)))
        return 1
    if whole and len(want) != len(got):
        print('the log has %d instructions, the trace %d' % (len(want), len(got)))
        return 1
    for i, (w, g) in enumerate(zip(want, got)):
        if w != g:
            print('instruction %d: executed 0x%x, decoded 0x%x' % (i, w, g))
            return 1
    print('%d instructions decoded exactly as executed' % len(got))
    return 0


if __name__ == '__main__':
    sys.exit(main())
