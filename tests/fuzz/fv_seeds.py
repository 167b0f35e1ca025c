#!/usr/bin/env python3
"""Seed corpus for fuzz_fv: firmware volumes holding a small PE32+ driver
(one code section, a DIR64 base relocation), as a file section, inside a
nested volume and inside an LZMA section, and the same driver as a TE
image (its headers stripped up to the section table) in a PEIM, each
followed by the driver laid out and relocated at the page the input is
searched as (fuzz_fv.c: the input is also the snapshot, at 0x100000), so
that the search finds it.

The driver is built here only: "fv_seeds.py --pe" and "--te" write its
file to standard output for tests/unit/test_fv_find.c."""
import lzma
import os
import struct
import sys

SNAP = 0x100000
AT = 0x1000  # where the laid-out driver sits in the input


def pe_file():
    text = bytes((i * 37 + 11) % 255 + 1 for i in range(0x100))
    # a pointer, relocated; no byte 0 (QEMU's record cannot tell a 0 byte
    # from one not executed)
    text = text[:0x10] + struct.pack('<Q', 0x1122334455661040) + text[0x18:]
    opt = struct.pack('<HBBIIIIIQIIHHHHHHIIIIHHQQQQII', 0x20b, 14, 0, 0x200, 0x200, 0, 0x1000,
                      0x1000, 0, 0x1000, 0x200, 0, 0, 0, 0, 0, 0, 0, 0x3000, 0x200, 0, 10, 0,
                      0x100000, 0x1000, 0x100000, 0x1000, 0, 16)
    dd = [(0, 0)] * 16
    dd[5] = (0x2000, 12)
    opt += b''.join(struct.pack('<II', a, b) for a, b in dd)
    coff = struct.pack('<HHIIIHH', 0x8664, 2, 0, 0, 0, len(opt), 0x22)
    sec = struct.pack('<8sIIIIIIHHI', b'.text', 0x100, 0x1000, 0x200, 0x200, 0, 0, 0, 0, 0x60000020)
    sec += struct.pack('<8sIIIIIIHHI', b'.reloc', 12, 0x2000, 0x200, 0x400, 0, 0, 0, 0, 0x42000040)
    hdr = b'MZ' + bytes(0x3a) + struct.pack('<I', 0x40) + b'PE\0\0' + coff + opt + sec
    reloc = struct.pack('<IIHH', 0x1000, 12, 0xa010, 0)
    f = hdr.ljust(0x200, b'\0') + text.ljust(0x200, b'\0') + reloc.ljust(0x200, b'\0')
    return f, text


def te_file(pe):
    """The PE as a TE image: a TE header in place of the DOS, PE and
    optional headers (StrippedSize of them), the section table and data
    kept. Layout: Signature, Machine, NumberOfSections, Subsystem,
    StrippedSize, AddressOfEntryPoint, BaseOfCode, ImageBase, then the
    base relocation and debug data directories."""
    pe_off = struct.unpack_from('<I', pe, 0x3c)[0]
    machine, nsec = struct.unpack_from('<HH', pe, pe_off + 4)
    optsz = struct.unpack_from('<H', pe, pe_off + 20)[0]
    opt = pe_off + 24
    entry, code = struct.unpack_from('<II', pe, opt + 16)
    base = struct.unpack_from('<Q', pe, opt + 24)[0]
    subsystem = struct.unpack_from('<H', pe, opt + 68)[0]
    reloc = pe[opt + 112 + 5 * 8:opt + 112 + 6 * 8]
    debug = pe[opt + 112 + 6 * 8:opt + 112 + 7 * 8]
    stripped = opt + optsz
    hdr = struct.pack('<2sHBBHIIQ', b'VZ', machine, nsec, subsystem, stripped, entry, code, base)
    return hdr + reloc + debug + pe[stripped:]


def section(kind, data):
    n = 4 + len(data)
    s = struct.pack('<I', n)[:3] + bytes([kind]) + data
    return s + bytes(-len(s) % 4)


def ffs(guid0, kind, sections):
    size = 24 + len(sections)
    return bytes([guid0]) + bytes(15) + bytes(2) + bytes([kind, 0]) + struct.pack('<I', size)[:3] + b'\0' + sections


def volume(files):
    body = b''
    for f in files:
        body += bytes(-len(body) % 8) + f
    n = 72 + len(body)
    n += -n % 8
    hdr = bytes(32) + struct.pack('<Q', n) + b'_FVH' + bytes(4) + struct.pack('<H', 72) + bytes(22)
    return (hdr + body).ljust(n, b'\xff')


def laid_out(text, base):
    """.text relocated for RVA 0 at base"""
    v = struct.unpack_from('<Q', text, 0x10)[0] + base
    return text[:0x10] + struct.pack('<Q', v) + text[0x18:]


def main(out):
    os.makedirs(out, exist_ok=True)
    pe, text = pe_file()
    secs = section(0x15, 'Drv\0'.encode('utf-16-le')) + section(0x10, pe)
    plain = volume([ffs(1, 7, secs)])
    nested = volume([ffs(2, 0x0b, section(0x17, plain))])
    packed = lzma.compress(secs, format=lzma.FORMAT_ALONE)
    packed = packed[:5] + struct.pack('<Q', len(secs)) + packed[13:]
    guid = bytes.fromhex('98584eee14395942 9d6edc7bd79403cf'.replace(' ', ''))
    lz = volume([ffs(3, 7, section(0x02, guid + struct.pack('<HH', 24, 1) + packed))])
    tef = te_file(pe)
    te = volume([ffs(4, 6, section(0x15, 'Pei\0'.encode('utf-16-le')) + section(0x12, tef))])
    te_hdr = struct.unpack_from('<H', tef, 6)[0] - 40  # the TE header's RVA
    for name, fv, hdr in (('plain', plain, 0), ('nested', nested, 0), ('lzma', lz, 0),
                          ('te', te, te_hdr)):
        # the driver where the search expects it: its first byte (PE
        # headers, TE header) at AT, so .text at AT + 0x1000 - hdr
        code = laid_out(text, SNAP + AT - hdr)
        data = bytes(fv.ljust(AT, b'\0')) + bytes(0x1000 - hdr) + code
        with open(os.path.join(out, name), 'wb') as f:
            f.write(data)


if __name__ == '__main__':
    if sys.argv[1] in ('--pe', '--te'):
        pe = pe_file()[0]
        sys.stdout.buffer.write(pe if sys.argv[1] == '--pe' else te_file(pe))
    else:
        main(sys.argv[1])
