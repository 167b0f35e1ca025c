#!/usr/bin/env python3
"""Check the time a decoder gives each instruction of an efipt-qemu.so trace
against QEMU's instruction count, as recorded by insnlog.so in the same
process: under -icount shift=N the k-th execution callback (REP iterations
count, as in QEMU's icount) starts at (k << N) ns, which is the emulated TSC.

usage: time_cmp.py LOG DECODED MANIFEST TOLERANCE

LOG: 8-byte addresses, one per execution callback, from QEMU's first (the
logger's skip=0). DECODED: "ADDRESS TSC" lines (tests/qemu/ipt_insns.c
--time). A decoder learns the time at timing packets only, so between them
its time lags (a REP loop runs long without a packet); where its time
changes, the packets just read must put it at the instruction's start or
up to TOLERANCE ns later (CYCs precede a packet that may cover several
branches), never earlier; the last instruction's time must be within
TOLERANCE too. Prints one line; exit status 0 if so."""
import json
import struct
import sys


def main():
    log_path, dec_path, man_path, tol = sys.argv[1:5]
    tol = int(tol)
    raw = open(log_path, 'rb').read()
    log = struct.unpack('<%dQ' % (len(raw) // 8), raw[:len(raw) // 8 * 8])
    man = json.load(open(man_path))
    tr, tm = man['trace'], man['timing']
    shift = int(tm['clock'].split('shift=')[1].split(':')[0].split(' ')[0])
    k = tr['first_call']
    if k >= len(log) or log[k] != int(tr['first_ip'], 16):
        print('trace starts at call %d (%s), not in the log' % (k, tr['first_ip']))
        return 1
    worst, n, last, updates = 0, 0, None, 0
    prev, prev_t = None, None
    for line in open(dec_path):
        ip, t = line.split()
        ip = int(ip, 16)
        if ip == prev:
            continue  # a REP instruction again: one instruction (collapse)
        while k < len(log) and log[k] != ip:
            k += 1  # the same address repeated: REP iterations, each counted
        if k >= len(log):
            print('decoded instruction %d (0x%x) is not in the log' % (n, ip))
            return 1
        if t == '-':
            print('instruction %d (0x%x) has no time' % (n, ip))
            return 1
        t = int(t, 16)
        err = t - (k << shift)
        if prev_t is not None and t < prev_t:
            print('instruction %d (0x%x): time goes back' % (n, ip))
            return 1
        if t != prev_t:
            updates += 1
            if abs(err) > abs(worst) or err < 0:
                worst = err
            if err < 0 or err > tol:
                print('instruction %d (0x%x): time %d ns, started at %d ns' %
                      (n, ip, t, k << shift))
                return 1
        prev_t = t
        last = err
        prev = ip
        n += 1
        k += 1
    if not n or updates < 2 or abs(last) > tol:
        print('%d instructions, %d time updates, the last %d ns off (tolerance %d)' %
              (n, updates, last, tol))
        return 1
    print('%d instructions, %d time updates within %d ns, last %d ns off, %d ns each' %
          (n, updates, worst, last, 1 << shift))
    return 0


sys.exit(main())
