#!/usr/bin/env python3
"""A gzip'd newc cpio archive (a Linux initramfs) from host files.

usage: mkinitramfs.py OUT SRC:DEST...

Each SRC (a host file) goes to DEST in the archive with its mode (/init
is made executable); directories on the way are created. /init must be
among the DESTs.
"""
import gzip
import os
import sys


def entry(out, name, mode, data=b"", ino=[0]):
    ino[0] += 1
    name_b = name.encode() + b"\0"
    hdr = "070701" + "".join("%08X" % v for v in (
        ino[0], mode, 0, 0, 1, 0, len(data), 0, 0, 0, 0, len(name_b), 0))
    out.write(hdr.encode() + name_b)
    out.write(b"\0" * ((4 - (110 + len(name_b)) % 4) % 4))
    out.write(data)
    out.write(b"\0" * ((4 - len(data) % 4) % 4))


def main():
    out_path, specs = sys.argv[1], sys.argv[2:]
    dirs, files = set(), []
    for spec in specs:
        src, dest = spec.split(":", 1)
        dest = dest.lstrip("/")
        files.append((src, dest))
        parts = dest.split("/")[:-1]
        for i in range(1, len(parts) + 1):
            dirs.add("/".join(parts[:i]))
    if "init" not in [d for _, d in files]:
        sys.exit("mkinitramfs.py: no /init")
    with gzip.open(out_path + ".tmp", "wb") as out:
        for d in sorted(dirs):
            entry(out, d, 0o040755)
        for src, dest in files:
            mode = os.stat(src).st_mode & 0o777
            if dest == "init":
                mode |= 0o755
            entry(out, dest, 0o100000 | mode, open(src, "rb").read())
        entry(out, "TRAILER!!!", 0)
    os.rename(out_path + ".tmp", out_path)


main()
