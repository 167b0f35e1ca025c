"""efipt diff's counts against the logging plugin's records (t_diff_edk2.sh).

    diff_logref.py counts TMP A B ELF_A ELF_B FN_CSV IMG_CSV
    diff_logref.py window TMP A B ELF_A ELF_B FROM TO FN_CSV

TMP/A/log.bin is run A's record (tests/qemu/insnlog.c: every executed
instruction's address, 8 bytes each), TMP/A/run its run directory (the
images' places in images.json); ELF_A the application's ELF with its
function symbols. Nothing of efipt is used to count.

counts: every image's instructions (efipt diff --by image's csv, an image's
code and interrupt rows together) and every application function's
(exclusive, its csv) must be the logger's, in A and B; prints the
application's functions and the images that changed, with B - A.

window: the records cut from the first instruction in function FROM to the
first in TO after it; every application function's instructions in that
window must be the csv's; prints them, then "totals NA NB".
"""
import csv
import json
import struct
import subprocess
import sys


def funcs(elf):
    out = []
    for line in subprocess.run(["readelf", "-sW", elf], capture_output=True, text=True,
                               check=True).stdout.splitlines():
        f = line.split()
        if len(f) >= 8 and f[3] == "FUNC" and f[6] != "UND" and int(f[2], 0):
            out.append((int(f[1], 16), int(f[1], 16) + int(f[2], 0), f[7].split(".")[0]))
    return out


def record(tmp, run, elf):
    """The executed addresses (a REP instruction's iterations once), the
    image of an address, and the application function of an address."""
    raw = open("%s/%s/log.bin" % (tmp, run), "rb").read()
    seq = struct.unpack("<%dQ" % (len(raw) // 8), raw[:len(raw) // 8 * 8])
    imgs = [(int(i["base"], 16), int(i["size"]), i["name"])
            for i in json.load(open("%s/%s/run/images.json" % (tmp, run)))["images"]]
    base, size = next((b, s) for b, s, n in imgs if n == "FixtureApp")
    fs = funcs(elf)
    out, prev = [], None
    for a in seq:
        if a != prev:
            out.append(a)
        prev = a

    def image(a):
        return next((n for b, s, n in imgs if b <= a < b + s), "[unknown]")

    def function(a):
        if not base <= a < base + size:
            return None
        return next((n for lo, hi, n in fs if lo <= a - base < hi), "[unknown]")
    return out, image, function


def counts(tmp, run, elf):
    seq, image, function = record(tmp, run, elf)
    per_img, per_fn = {}, {}
    for a in seq:
        n = image(a)
        per_img[n] = per_img.get(n, 0) + 1
        f = function(a)
        if f:
            per_fn[f] = per_fn.get(f, 0) + 1
    return per_img, per_fn


def app_rows(fn_csv):
    fn = {}
    for r in csv.DictReader(open(fn_csv)):
        if r["image"] == "FixtureApp":
            assert r["context"] == "code", ("the app ran in an interrupt", r)
            assert r["function"] not in fn, r
            fn[r["function"]] = r
    return fn


def main_counts(tmp, run_a, run_b, elf_a, elf_b, fn_csv, img_csv):
    ia, fa = counts(tmp, run_a, elf_a)
    ib, fb = counts(tmp, run_b, elf_b)
    # an image's code row and interrupt row together: what the logger saw run
    rows = {}
    for r in csv.DictReader(open(img_csv)):
        s = rows.setdefault(r["image"], {"a_insns": 0, "b_insns": 0})
        s["a_insns"] += int(r["a_insns"])
        s["b_insns"] += int(r["b_insns"])
    for name in set(ia) | set(ib):
        r = rows.get(name)
        assert r, "image %s not in the diff" % name
        assert (r["a_insns"], r["b_insns"]) == (ia.get(name, 0), ib.get(name, 0)), \
            (name, r, ia.get(name), ib.get(name))
    assert set(rows) == set(ia) | set(ib), (set(rows), set(ia) | set(ib))
    fn = app_rows(fn_csv)
    for f in set(fa) | set(fb):
        r = fn.get(f)
        assert r, "FixtureApp`%s not in the diff" % f
        assert (int(r["a_excl"]), int(r["b_excl"])) == (fa.get(f, 0), fb.get(f, 0)), \
            (f, r, fa.get(f), fb.get(f))
        assert fa.get(f, 0) == fb.get(f, 0) or r["status"] != "same", (f, r)
    assert set(fn) == set(fa) | set(fb), (set(fn), set(fa) | set(fb))
    changed = sorted(f for f in fn if fa.get(f, 0) != fb.get(f, 0))
    imgs = sorted(n for n in rows if ia.get(n, 0) != ib.get(n, 0))
    print("app: " + (", ".join("%s %+d" % (f, fb.get(f, 0) - fa.get(f, 0)) for f in changed)
                     or "no change") +
          "; images: " + (", ".join("%s %+d" % (n, ib.get(n, 0) - ia.get(n, 0)) for n in imgs)
                          or "no change"))


def window(tmp, run, elf, fn_from, fn_to):
    seq, _, function = record(tmp, run, elf)
    per_fn, state, total = {}, 0, 0
    for a in seq:
        f = function(a)
        if state == 0 and f == fn_from:
            state = 1
        elif state == 1 and f == fn_to:
            state = 2
            break
        if state == 1:
            total += 1
            if f:
                per_fn[f] = per_fn.get(f, 0) + 1
    assert state == 2, (run, "the window never closed", state)
    return per_fn, total


def main_window(tmp, run_a, run_b, elf_a, elf_b, fn_from, fn_to, fn_csv):
    fa, ta = window(tmp, run_a, elf_a, fn_from, fn_to)
    fb, tb = window(tmp, run_b, elf_b, fn_from, fn_to)
    got = {f: [int(r["a_excl"]), int(r["b_excl"])] for f, r in app_rows(fn_csv).items()}
    for f in set(fa) | set(fb) | set(got):
        assert got.get(f, [0, 0]) == [fa.get(f, 0), fb.get(f, 0)], \
            (f, got.get(f), fa.get(f), fb.get(f))
    print("window of %d and %d instructions: %s" % (ta, tb, ", ".join(
        "%s %d->%d" % (f, fa.get(f, 0), fb.get(f, 0)) for f in sorted(set(fa) | set(fb)))))
    print("totals %d %d" % (ta, tb))


if __name__ == "__main__":
    if sys.argv[1:2] == ["counts"] and len(sys.argv) == 9:
        main_counts(*sys.argv[2:9])
    elif sys.argv[1:2] == ["window"] and len(sys.argv) == 10:
        main_window(*sys.argv[2:10])
    else:
        sys.exit(__doc__)
