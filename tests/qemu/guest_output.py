#!/usr/bin/env python3
"""The trace a guest would read back from its own output regions after an
efipt-qemu.so start=guest run: the regions of guest-output.bin as the
manifest's trace.guest.cpus[N] describes them, taken the way efipt.efi's
extractor (arch/x86_64/pt_output.c ptout_extract()) takes the memory of a
real CPU from its final IA32_RTIT_OUTPUT_MASK_PTRS and STATUS:
  - the write position (region, OutputOffset); after a ToPA STOP the
    offset reads the region's size - 1 and the region is full (SDM
    33.2.7.2 "ToPA STOP");
  - wrapped when any byte at or after the position was written: then the
    oldest byte is at the position, and the stream runs from there through
    the later regions, then from the first region up to the position.

usage: guest_output.py RUNDIR OUT [CPU]
Writes the stream to OUT and prints "BYTES wrapped|unwrapped stopped|-".
"""
import json
import sys


def main():
    run, out = sys.argv[1:3]
    cpu = int(sys.argv[3]) if len(sys.argv) > 3 else 0
    g = [c for c in json.load(open(run + '/manifest.json'))['trace']['guest']['cpus']
         if c['cpu'] == cpu][0]
    data = open(run + '/guest-output.bin', 'rb').read()
    regs = g['regions']
    cur, off = g['position']['region'], g['position']['offset']
    stopped = int(g['status'], 16) >> 5 & 1
    size = regs[cur]['size']
    if stopped and off == size - 1:
        off = size
    if g['output'] == 'single-range':
        off %= size
    body = [data[r['file_offset']:r['file_offset'] + r['size']] for r in regs]
    wrapped = regs[cur]['written'] > off or any(r['written'] for r in regs[cur + 1:])
    s = b''
    if wrapped:
        s = body[cur][off:] + b''.join(body[cur + 1:])
    s += b''.join(body[:cur]) + body[cur][:off]
    open(out, 'wb').write(s)
    print('%d %s %s' % (len(s), 'wrapped' if wrapped else 'unwrapped',
                        'stopped' if stopped else '-'))
    return 0


sys.exit(main())
