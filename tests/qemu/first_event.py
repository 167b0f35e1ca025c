#!/usr/bin/env python3
"""first_event.py PACKETS: from `efipt packets` text of a trace taken with
TSC packets under -icount shift=0 (one TSC tick per instruction), the TSC of
the PSB+ before the first FUP outside a PSB+ -- an asynchronous event, the
first interrupt: at most a PSB period's instructions before it. Exit status
1 when the trace has none."""
import sys


def main():
    tsc, in_psb = None, False
    for line in open(sys.argv[1]):
        w = line.split()
        if len(w) < 2:
            continue
        kind = w[1]
        if kind == 'psb':
            in_psb = True
        elif kind == 'psbend':
            in_psb = False
        elif kind == 'tsc':
            tsc = int(w[2], 16)
        elif kind == 'fup' and not in_psb and tsc is not None:
            print(tsc)
            return 0
    print('no event outside a PSB+ in %s' % sys.argv[1], file=sys.stderr)
    return 1


if __name__ == '__main__':
    sys.exit(main())
