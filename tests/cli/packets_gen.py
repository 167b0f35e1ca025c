#!/usr/bin/env python3
"""Traces and checks for tests/cli/t_packets.sh.

Packets are assembled byte by byte from the packet format tables of the
Intel SDM Vol. 3C, section 33.4.2. Subcommands:
  all | errors          write a trace to stdout
  big N                 write a ~N byte trace to stdout, its packets to stderr
  check-jsonl OUT PT [lastip|errors]   check efipt's jsonl against docs/packets.md
  check-types OUT       every packet type occurs
  check-stat OUT PT     --stat output accounts for every byte of PT
  compare OUT EXPECT    jsonl packets equal the generator's list
  stat-vs-jsonl STAT JSONL   --stat counts equal the jsonl packets
  maxrss KB CMD...      CMD's peak RSS stays below KB
"""
import json
import random
import resource
import subprocess
import sys

PSB = bytes([0x02, 0x82] * 8)

NAMES = ("psb psbend pad tnt.8 tnt.64 tip tip.pge tip.pgd fup pip mode.exec "
         "mode.tsx stop tsc tma mtc cyc cbr ovf vmcs mnt ptw exstop mwait pwre "
         "pwrx bbp bip bep cfe evd").split()

# docs/packets.md payload fields; "subtype" stands for the payload "type" of BBP,
# CFE and EVD, which would collide with the packet's own "type".
NUM, HEX, BOOL, STR = "num", "hex", "bool", "str"
FIELDS = {
    "tnt.8": {"bits": STR}, "tnt.64": {"bits": STR},
    "tsc": {"tsc": HEX}, "tma": {"ctc": NUM, "fc": NUM}, "mtc": {"ctc": NUM},
    "cyc": {"cyc": HEX}, "cbr": {"ratio": NUM}, "pip": {"cr3": NUM, "nr": BOOL},
    "mode.exec": {"csl": BOOL, "csd": BOOL, "if": BOOL},
    "mode.tsx": {"intx": BOOL, "abrt": BOOL}, "vmcs": {"base": NUM},
    "mnt": {"payload": HEX}, "ptw": {"bytes": NUM, "ip": BOOL, "payload": HEX},
    "exstop": {"ip": BOOL}, "mwait": {"hints": NUM, "ext": NUM},
    "pwre": {"state": NUM, "sub": NUM, "hw": BOOL},
    "pwrx": {"last": NUM, "deepest": NUM, "wr": NUM},
    "bbp": {"sz": NUM, "subtype": NUM}, "bip": {"id": NUM, "payload": HEX},
    "bep": {"ip": BOOL}, "cfe": {"subtype": NUM, "vector": NUM, "ip": BOOL},
    "evd": {"subtype": NUM, "payload": HEX},
}
for n in ("tip", "tip.pge", "tip.pgd", "fup"):
    FIELDS[n] = {"ipc": NUM, "ip": HEX}


def le(v, n):
    return bytes((v >> (8 * i)) & 0xff for i in range(n))


def trace_all():
    t = PSB
    t += bytes([0x02, 0x23, 0x00])                               # psbend pad
    t += bytes([0x19]) + le(0x07060504030201, 7)                 # tsc
    t += bytes([0x02, 0x73, 0x34, 0x12, 0x00, 0xff, 0x01])       # tma
    t += bytes([0x02, 0x03, 0x2a, 0x00])                         # cbr
    t += bytes([0x02, 0x43, 0xff, 0x76, 0x98, 0xba, 0xdc, 0xfe]) # pip, nr
    t += bytes([0x02, 0xc8]) + le(0xfedcba9876, 5)               # vmcs
    t += bytes([0x99, 0x05, 0x99, 0x21])                         # mode.exec, mode.tsx
    t += bytes([0x71, 0x00, 0x10, 0x00, 0x00, 0xff, 0x7f])       # tip.pge ipc 3
    t += bytes([0x2d, 0x34, 0x12])                               # tip ipc 1
    t += bytes([0xd4])                                           # tnt.8 !.!.!.
    t += bytes([0x02, 0xa3]) + le(0x181, 6)                      # tnt.64 !......!
    t += bytes([0x59, 0xa5, 0x07, 0x02])                         # mtc, cyc 0x20
    t += bytes([0x01, 0x02, 0x83])                               # tip.pgd ipc 0, stop
    t += bytes([0x02, 0xf3])                                     # ovf
    t += bytes([0x02, 0xc3, 0x88]) + le(0x1122334455667788, 8)   # mnt
    t += bytes([0x02, 0xb2]) + le(0x0807060504030201, 8)         # ptw 8, ip
    t += bytes([0x02, 0xe2])                                     # exstop ip
    t += bytes([0x02, 0xc2, 0x20, 0, 0, 0, 0x01, 0, 0, 0])       # mwait
    t += bytes([0x02, 0x22, 0x80, 0x62])                         # pwre
    t += bytes([0x02, 0xa2, 0x26, 0x01, 0, 0, 0])                # pwrx
    t += bytes([0x02, 0x63, 0x81, 0x0c, 1, 2, 3, 4, 0x02, 0xb3]) # bbp, bip, bep
    t += bytes([0x5d, 1, 2, 3, 4])                               # fup ipc 2
    t += bytes([0x02, 0x13, 0x81, 0x0e])                         # cfe
    t += bytes([0x02, 0x53, 0x02]) + le(0x30, 8)                 # evd
    t += bytes([0xdd]) + le(0xffffffff81000000, 8)               # fup ipc 6
    return t


def trace_errors():
    t = PSB + bytes([0x02, 0x23, 0x00, 0x00])     # 0..19
    t += bytes([0x02, 0x00]) + bytes([0x04] * 18)  # bad opcode at 20, junk to 40
    t += PSB + bytes([0x02, 0x23])                 # 40..57
    t += bytes([0xad, 1, 2, 3, 4, 5, 6])           # ipc 101b at 58
    t += bytes([0x04] * 9)
    t += PSB + bytes([0x06])
    t += bytes([0xdd, 1, 2, 3])                    # fup cut by the end
    return t


def big(n, out, exp):
    rnd = random.Random(1)
    pkts = [
        ("tnt.8", lambda: bytes([0x04 | (rnd.randrange(64) << 1) | 0x80])),
        ("tip", lambda: bytes([0xcd]) + le(rnd.getrandbits(64), 8)),
        ("tip", lambda: bytes([0x4d]) + le(rnd.getrandbits(32), 4)),
        ("fup", lambda: bytes([0x7d]) + le(rnd.getrandbits(48), 6)),
        ("mtc", lambda: bytes([0x59, rnd.randrange(256)])),
        ("cyc", lambda: bytes([0x07, 0x0a])),
        ("tsc", lambda: bytes([0x19]) + le(rnd.getrandbits(56), 7)),
        ("mnt", lambda: bytes([0x02, 0xc3, 0x88]) + le(rnd.getrandbits(64), 8)),
        ("pad", lambda: bytes([0])),
        ("tnt.64", lambda: bytes([0x02, 0xa3]) + le(rnd.getrandbits(47) | (1 << 47), 6)),
    ]
    buf = bytearray()
    lines = []
    next_psb = 0
    while len(buf) < n:
        if len(buf) >= next_psb:
            lines.append("%d psb 16" % len(buf))
            buf += PSB
            next_psb = len(buf) + 4096
            continue
        name, f = pkts[rnd.randrange(len(pkts))]
        b = f()
        lines.append("%d %s %d" % (len(buf), name, len(b)))
        buf += b
    out.write(bytes(buf))
    exp.write("\n".join(lines) + "\n")


def check_value(kind, v):
    if kind == NUM:
        return isinstance(v, int) and not isinstance(v, bool) and 0 <= v < 2 ** 53
    if kind == HEX:
        return isinstance(v, str) and v.startswith("0x") and int(v, 16) >= 0
    if kind == BOOL:
        return isinstance(v, bool)
    return isinstance(v, str)


def check_jsonl(path, pt, mode):
    size = len(open(pt, "rb").read())
    expect_off = None
    errors = 0
    for no, line in enumerate(open(path), 1):
        o = json.loads(line)
        keys = list(o)
        if o.get("type") == "error":
            assert keys == ["off", "type", "msg"], (no, keys)
            assert isinstance(o["msg"], str) and o["msg"]
            errors += 1
            expect_off = None
            continue
        assert keys[:3] == ["off", "size", "type"], (no, keys)
        t = o["type"]
        assert t in NAMES, (no, t)
        want = dict(FIELDS.get(t, {}))
        if mode == "lastip" and t in ("tip", "tip.pge", "tip.pgd", "fup") and o["ipc"]:
            want["lastip"] = HEX
        assert keys[3:] == list(want), (no, t, keys, list(want))
        for k, kind in want.items():
            assert check_value(kind, o[k]), (no, k, o[k])
        if t.startswith("tnt"):
            assert set(o["bits"]) <= set("!."), (no, o["bits"])
        if expect_off is not None:
            assert o["off"] == expect_off, (no, o["off"], expect_off)
        elif no == 1 and mode != "errors":
            assert o["off"] == 0
        expect_off = o["off"] + o["size"]
    if mode == "errors":
        assert errors > 0
    else:
        assert errors == 0 and expect_off == size, (errors, expect_off, size)


def main():
    cmd = sys.argv[1]
    if cmd == "all":
        sys.stdout.buffer.write(trace_all())
    elif cmd == "errors":
        sys.stdout.buffer.write(trace_errors())
    elif cmd == "big":
        big(int(sys.argv[2]), sys.stdout.buffer, sys.stderr)
    elif cmd == "check-jsonl":
        check_jsonl(sys.argv[2], sys.argv[3], sys.argv[4] if len(sys.argv) > 4 else "")
    elif cmd == "check-types":
        seen = {json.loads(l)["type"] for l in open(sys.argv[2])}
        missing = set(NAMES) - seen
        assert not missing, missing
    elif cmd == "check-stat":
        size = len(open(sys.argv[3], "rb").read())
        total = skipped = None
        for line in open(sys.argv[2]):
            f = line.split()
            if f[0] == "total":
                total = int(f[2])
            elif f[0] == "skipped":
                skipped = int(f[1])
        assert total is not None and skipped is not None
        assert total + skipped == size, (total, skipped, size)
    elif cmd == "stat-vs-jsonl":
        want = {}
        for l in open(sys.argv[3]):
            o = json.loads(l)
            if o["type"] != "error":
                c, b = want.get(o["type"], (0, 0))
                want[o["type"]] = (c + 1, b + o["size"])
        got = {}
        for line in open(sys.argv[2]):
            f = line.split()
            if f[0] in NAMES:
                got[f[0]] = (int(f[1]), int(f[2]))
        assert got == want, (got, want)
    elif cmd == "compare":
        got = []
        for l in open(sys.argv[2]):
            o = json.loads(l)
            got.append("%d %s %d" % (o["off"], o["type"], o["size"]))
        want = open(sys.argv[3]).read().split("\n")[:-1]
        assert got == want, (len(got), len(want),
                             next((g, w) for g, w in zip(got + [""], want + [""]) if g != w))
    elif cmd == "maxrss":
        limit = int(sys.argv[2])
        subprocess.run(sys.argv[3:], stdout=subprocess.DEVNULL, check=False)
        rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        assert rss < limit, rss
    else:
        sys.exit("unknown subcommand " + cmd)


if __name__ == "__main__":
    main()
