#!/usr/bin/env python3
"""Test-only: lay a PE32+ file out as a loader would at BASE (headers and
sections at their RVAs, DIR64 base relocations applied) and write the memory
image, for building a run directory from a real .efi.

usage: pe_snapshot.py PE BASE OUT
"""
import struct
import sys

pe, base, out = sys.argv[1], int(sys.argv[2], 0), sys.argv[3]
d = open(pe, "rb").read()
pe_off = struct.unpack_from("<I", d, 0x3C)[0]
nsec, opt_size = struct.unpack_from("<H", d, pe_off + 6)[0], struct.unpack_from("<H", d, pe_off + 20)[0]
opt = pe_off + 24
image_base = struct.unpack_from("<Q", d, opt + 24)[0]
size_of_image, size_of_headers = struct.unpack_from("<II", d, opt + 56)
reloc_rva, reloc_size = struct.unpack_from("<II", d, opt + 112 + 5 * 8)
img = bytearray(size_of_image + (-size_of_image % 4096))
img[:size_of_headers] = d[:size_of_headers]
for i in range(nsec):
    s = opt + opt_size + 40 * i
    vsize, rva, rsize, roff = struct.unpack_from("<IIII", d, s + 8)
    n = min(vsize or rsize, rsize)
    img[rva:rva + n] = d[roff:roff + n]
delta = (base - image_base) & (2**64 - 1)
p = reloc_rva
while p < reloc_rva + reloc_size:
    page, size = struct.unpack_from("<II", img, p)
    if size < 8:
        break
    for k in range((size - 8) // 2):
        e = struct.unpack_from("<H", img, p + 8 + 2 * k)[0]
        if e >> 12 == 10:
            at = page + (e & 0xFFF)
            v = struct.unpack_from("<Q", img, at)[0]
            struct.pack_into("<Q", img, at, (v + delta) & (2**64 - 1))
    p += size
open(out, "wb").write(img)
print(len(img))
