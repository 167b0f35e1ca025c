#!/usr/bin/env python3
"""The trace a recovered run directory must hold, from the synthetic truth.

usage: recorder_check.py STREAM RUNDIR RING POS

STREAM is the whole synthetic stream (efipt synth over the traced image's
snapshot, with the options efipt.efi synthesized it with), RING the ring's
size, POS the write position efipt.efi printed when it armed. The ring holds
the stream's last lap (byte i at i mod RING); the manifest's recovered.end
says which part of it the run must hold:
  unwrapped   the whole stream
  stopped     the ring oldest first: the stream's last RING bytes
  psb_tsc     from the PSB after the newest one to the end of the newest
              PSB+, and POS within the window the manifest names
Prints what was compared; exits 1 on any difference.
"""
import json
import sys


def main():
    stream = open(sys.argv[1], "rb").read()
    run = sys.argv[2]
    size, pos = int(sys.argv[3], 0), int(sys.argv[4], 0)
    got = open(run + "/trace.pt", "rb").read()
    rec = json.load(open(run + "/manifest.json"))["recovered"]
    how, n = rec["end"], len(stream)
    if pos != n % size:
        sys.exit("write position 0x%x, but the stream of %d bytes ends at 0x%x" % (pos, n, n % size))
    ring = bytearray(size)
    for i in range(max(0, n - size), n):
        ring[i % size] = stream[i]
    if how == "unwrapped":
        want = stream
    elif how == "stopped":
        want = stream[max(0, n - size):]
    elif how == "psb_tsc":
        lo, hi = int(rec["write_position_after"], 16), int(rec["write_position_before"], 16)
        inside = lo <= pos < hi if lo <= hi else (pos >= lo or pos < hi)
        if not inside:
            sys.exit("write position 0x%x is not in the window [0x%x, 0x%x)" % (pos, lo, hi))
        want = ring[hi:] + ring[:lo] if hi > lo else ring[hi:lo]
    else:
        sys.exit("unknown end '%s'" % how)
    if got != bytes(want):
        first = next((i for i in range(min(len(got), len(want))) if got[i] != want[i]), None)
        sys.exit("%s: trace.pt has %d bytes, the truth %d; first difference at %s"
                 % (how, len(got), len(want), first))
    print("%s: %d bytes equal the synthetic truth" % (how, len(got)))


main()
