#!/usr/bin/env python3
"""Crafted firmware boot-performance tables (ACPI FPDT, FBPT, S3PT) for tests.

Layouts from the ACPI specification (5.2.24) and EDK2's extended records
(ExtendedFirmwarePerformance.h); see core/fpdt.h.

  fpdt_gen.py bin OUT [--scale S] [--damaged] [--guid-a G] [--guid-b G]
                     [--a-start NS --a-end NS]
      fpdt.bin as efipt.efi saves it: the FPDT, then the FBPT, then the S3PT.
      Records (ns since reset, times multiplied by S):
        basic boot: ResetEnd 1000, loader load 900000, start 910000,
                    EBS entry 950000, EBS exit 960000
        StartImage (GUID events 0x01/0x02) of G_A: 100000 .. 300000 (or
                    --a-start .. --a-end)
        StartImage of G_B: 400000 .. 450000, inside it
        Function "InitThing" (string events 0x30/0x31, GUID G_B):
                    410000 .. 420000
        DB:Start (GUID qword string 0x05/0x06, "PciBusDxe"): 500000 .. 520000
        Callback (dual GUID string 0x20/0x21, "OnReady"): 600000 .. 601000
        a single event (ID 0, string "Mark"): 700000
      S3PT: resume count 1, 2000, 2000; suspend 10, 20.
      --damaged also adds, in the FBPT: a record with length 3 (damages the
      rest of the table, so it is put last, after a GUID event of length 20:
      shorter than its fields).
  fpdt_gen.py acpi FPDT_OUT FBPT_OUT [S3PT_OUT] --fbpt-addr A [--s3pt-addr B] [...]
      the ACPI FPDT (for QEMU's -acpitable) pointing to the FBPT at physical
      address A (and the S3PT at B), and the FBPT alone (for -device
      loader,addr=A; the S3PT for addr=B).
"""
import struct
import sys
import uuid

GUID_A = "11111111-2222-3333-4444-555555555555"
GUID_B = "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee"


def guid_bytes(g):
    return uuid.UUID(g).bytes_le  # EFI_GUID: first three fields little endian


def acpi_table(sig, body, rev=1):
    length = 36 + len(body)
    hdr = bytearray(sig + struct.pack("<IBB", length, rev, 0) + b"EFIPT " +
                    b"EFIPTFPD" + struct.pack("<I", 1) + b"EFPT" +
                    struct.pack("<I", 1))
    t = hdr + body
    t[9] = (-sum(t)) & 0xff
    return bytes(t)


def ptr_rec(rtype, addr):
    return struct.pack("<HBBIQ", rtype, 16, 1, 0, addr)


def perf_table(sig, recs):
    body = b"".join(recs)
    return sig + struct.pack("<I", 8 + len(body)) + body


def basic_boot(s):
    return struct.pack("<HBBIQQQQQ", 2, 48, 2, 0, 1000 * s, 900000 * s,
                       910000 * s, 950000 * s, 960000 * s)


def ev(rtype, pid, ts, guid, extra=b"", length=None):
    rec = struct.pack("<HBBHIQ", rtype, 0, 1, pid, 0, ts) + guid_bytes(guid) + extra
    n = len(rec) if length is None else length
    rec = bytearray(rec[:n] if length is not None and length < len(rec) else rec)
    rec[2] = n
    return bytes(rec)


def name(s, size=24):
    b = s.encode()
    return b + b"\0" * (size - len(b))


def fbpt(s, guid_a, guid_b, damaged, a_start=100000, a_end=300000):
    recs = [basic_boot(s),
            ev(0x1010, 0x01, a_start * s, guid_a),
            ev(0x1010, 0x01, 400000 * s, guid_b),
            ev(0x1011, 0x30, 410000 * s, guid_b, name("InitThing")),
            ev(0x1011, 0x31, 420000 * s, guid_b, name("InitThing")),
            ev(0x1010, 0x02, 450000 * s, guid_b),
            ev(0x1010, 0x02, a_end * s, guid_a),
            ev(0x1014, 0x05, 500000 * s, guid_a, struct.pack("<Q", 0x1234) + name("PciBusDxe")),
            ev(0x1014, 0x06, 520000 * s, guid_a, struct.pack("<Q", 0x1234) + name("PciBusDxe")),
            ev(0x1012, 0x20, 600000 * s, guid_a, guid_bytes(guid_b) + name("OnReady")),
            ev(0x1012, 0x21, 601000 * s, guid_a, guid_bytes(guid_b) + name("OnReady")),
            ev(0x1011, 0x00, 700000 * s, guid_a, name("Mark"))]
    if damaged:
        recs.append(ev(0x1010, 0x01, 800000 * s, guid_a, length=20))
        recs.append(struct.pack("<HBB", 0x1010, 3, 1))
    return perf_table(b"FBPT", recs)


def s3pt():
    return perf_table(b"S3PT", [struct.pack("<HBBIQQ", 0, 24, 1, 1, 2000, 2000),
                                struct.pack("<HBBQQ", 1, 20, 1, 10, 20)])


def main(argv):
    args = argv[1:]
    opt = {"--scale": "1", "--guid-a": GUID_A, "--guid-b": GUID_B, "--fbpt-addr": "0",
           "--a-start": "100000", "--a-end": "300000", "--s3pt-addr": "0"}
    flags = set()
    pos = []
    i = 0
    while i < len(args):
        if args[i] in opt:
            opt[args[i]] = args[i + 1]
            i += 2
        elif args[i].startswith("--"):
            flags.add(args[i])
            i += 1
        else:
            pos.append(args[i])
            i += 1
    s = int(opt["--scale"])
    fb = fbpt(s, opt["--guid-a"], opt["--guid-b"], "--damaged" in flags,
              int(opt["--a-start"], 0), int(opt["--a-end"], 0))
    addr = int(opt["--fbpt-addr"], 0)
    if pos[0] == "bin":
        fp = acpi_table(b"FPDT", ptr_rec(0, addr or 0x7000000) + ptr_rec(1, 0x7100000))
        with open(pos[1], "wb") as f:
            f.write(fp + fb + s3pt())
    elif pos[0] == "acpi":
        s3 = int(opt["--s3pt-addr"], 0)
        body = acpi_table(b"FPDT", ptr_rec(0, addr) + (ptr_rec(1, s3) if s3 else b""))
        with open(pos[1], "wb") as f:
            f.write(body)
        with open(pos[2], "wb") as f:
            f.write(fb)
        if s3:
            with open(pos[3], "wb") as f:
                f.write(s3pt())
    else:
        sys.exit("usage: fpdt_gen.py bin OUT | acpi FPDT_OUT FBPT_OUT [S3PT_OUT] --fbpt-addr A")


if __name__ == "__main__":
    main(sys.argv)
