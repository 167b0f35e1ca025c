# efipt coverage: drcov checked by an independent reader against the ground
# truth of synthesized traces, text/json figures, --fail-under gates,
# --merge (union; the same run twice gives it back), run directories, and
# bad input (damaged drcov, unwritable -o): a clear message, no output.
. tests/lib.sh
CHECK="python3 tests/cli/drcov_check.py"
EFI=build/efipt.efi
# check NAME COMMAND...: ok if the command succeeds, else its output
check() {
	name=$1
	shift
	if "$@" >"$TMP/chk" 2>&1; then ok "$name"; else nok "$name" "$(head -c 400 "$TMP/chk")"; fi
}

# efipt.efi at its ImageBase and relocated, with interrupts and DisRETC
$EFIPT synth --pe $EFI --out "$TMP/a.pt" --truth "$TMP/a.truth" --insns 300000 --seed 3 2>/dev/null
$EFIPT synth --pe $EFI:0x7f000000 --out "$TMP/b.pt" --truth "$TMP/b.truth" --insns 300000 \
	--seed 11 --interrupts 40 --disretc 2>/dev/null
expect_rc "drcov of a synthesized trace" 0 $EFIPT coverage --pt "$TMP/a.pt" --pe $EFI -o "$TMP/a.drcov"
check "drcov layout; every executed instruction in a block" $CHECK "$TMP/a.drcov" --truth "$TMP/a.truth"
contains "drcov: the module is named as the file a disassembler opens" "$TMP/a.drcov" ", efipt.efi"
expect_rc "drcov of a relocated image" 0 $EFIPT coverage --pt "$TMP/b.pt" --pe $EFI:0x7f000000 --disretc --format drcov -o "$TMP/b.out"
check "relocated: every executed instruction in a block" $CHECK "$TMP/b.out" --truth "$TMP/b.truth"
contains "relocated: module base" "$TMP/b.out" "0, 0x000000007f000000, "

# text and json: distinct executed instructions equal the truth's
expect_rc "json report" 0 $EFIPT coverage --pt "$TMP/a.pt" --pe $EFI --format json -o "$TMP/a.json"
distinct=$(sort -u "$TMP/a.truth" | wc -l)
got=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["images"][0]["insns"], d["total"]["insns"])' "$TMP/a.json")
if [ "$got" = "$distinct $distinct" ]; then ok "json: distinct instructions equal the truth ($distinct)"; else nok "json: distinct instructions equal the truth" "got '$got', truth $distinct"; fi
# conditional branches executed, taken, not taken, both: as the truth's
# (tests/cli/jcc_ref.py: objdump's disassembly of efipt.so); b.pt has
# interrupts, after which neither knows a branch's way
jcc() {
	python3 -c 'import json,sys; b=json.load(open(sys.argv[1]))[sys.argv[2]]; b=b[0]["branches"] if isinstance(b, list) else b["branches"]; print(b["executed"], b["taken"], b["not_taken"], b["both"])' "$1" "$2" 2>&1
}
ref=$(python3 tests/cli/jcc_ref.py "$TMP/a.truth" build/efipt.so 0)
got="$(jcc "$TMP/a.json" images) / $(jcc "$TMP/a.json" total)"
if [ "$got" = "$ref / $ref" ] && [ "${ref%% *}" -gt 0 ]; then ok "json: branches equal the truth's ($ref)"; else nok "json: branches equal the truth's" "got '$got', truth $ref"; fi
$EFIPT coverage --pt "$TMP/b.pt" --pe $EFI:0x7f000000 --disretc --format json -o "$TMP/b.json" 2>/dev/null
ref=$(python3 tests/cli/jcc_ref.py "$TMP/b.truth" build/efipt.so 0x7f000000)
got=$(jcc "$TMP/b.json" total)
if [ "$got" = "$ref" ]; then ok "json: branches with interrupts equal the truth's ($ref)"; else nok "json: branches with interrupts equal the truth's" "got '$got', truth $ref"; fi
expect_rc "text report on standard output" 0 $EFIPT coverage --pt "$TMP/a.pt" --pe $EFI
contains "text: the image's line" "$TMP/out" "efipt.efi"
contains "text: total line" "$TMP/out" "total"

# --fail-under: exit 3 below, 0 at or above; per --image
expect_rc "--fail-under 100 fails (exit 3)" 3 $EFIPT coverage --pt "$TMP/a.pt" --pe $EFI --fail-under 100
contains "--fail-under: says why" "$TMP/err" "is below --fail-under 100%"
expect_rc "--fail-under 1 passes" 0 $EFIPT coverage --pt "$TMP/a.pt" --pe $EFI --fail-under 1 -o "$TMP/g.txt"
expect_rc "--fail-under with --image (no extension) passes" 0 $EFIPT coverage --pt "$TMP/a.pt" --pe $EFI --fail-under 1 --image EFIPT
expect_rc "--image that names no image: exit 3" 3 $EFIPT coverage --pt "$TMP/a.pt" --pe $EFI --fail-under 1 --image nosuch.efi
contains "--image: names it" "$TMP/err" "--image nosuch.efi: no such image"
expect_rc "--fail-under out of range is a usage error" 2 $EFIPT coverage --pt "$TMP/a.pt" --pe $EFI --fail-under 101

# --merge: the union; a file merged with itself is the same file
expect_rc "merge a file with itself" 0 $EFIPT coverage --merge "$TMP/a.drcov" "$TMP/a.drcov" -o "$TMP/aa.drcov"
if cmp -s "$TMP/a.drcov" "$TMP/aa.drcov"; then ok "merge: the same run twice keeps the same blocks"; else nok "merge: the same run twice keeps the same blocks" "files differ"; fi
$EFIPT synth --pe $EFI --out "$TMP/c.pt" --truth "$TMP/c.truth" --insns 300000 --seed 5 --interrupts 20 2>/dev/null
$EFIPT coverage --pt "$TMP/c.pt" --pe $EFI -o "$TMP/c.drcov"
expect_rc "merge two runs and a relocated one" 0 $EFIPT coverage --merge "$TMP/a.drcov" "$TMP/c.drcov" "$TMP/b.out" -o "$TMP/ac.drcov"
check "merge: covered bytes are the union (by module path)" $CHECK "$TMP/ac.drcov" --union "$TMP/a.drcov" "$TMP/c.drcov" "$TMP/b.out"
check "merge: every instruction of both runs covered" sh -c "$CHECK '$TMP/ac.drcov' --truth '$TMP/a.truth' && $CHECK '$TMP/ac.drcov' --truth '$TMP/c.truth'"

# bad input: a clear message, exit 1, nothing written (an existing file kept)
echo previous >"$TMP/keep.drcov"
bad_merge() {
	name=$1 text=$2
	shift 2
	expect_rc "merge: $name: exit 1" 1 $EFIPT coverage --merge "$TMP/a.drcov" "$@" -o "$TMP/keep.drcov"
	contains "merge: $name: named" "$TMP/err" "$text"
	if [ "$(cat "$TMP/keep.drcov")" = previous ] && [ -z "$(ls "$TMP" | grep -v '^keep.drcov$' | grep keep)" ]; then
		ok "merge: $name: no output, no temporary file"
	else
		nok "merge: $name: no output, no temporary file" "$(ls "$TMP")"
	fi
}
size=$(stat -c %s "$TMP/a.drcov")
head -c $((size - 3)) "$TMP/a.drcov" >"$TMP/cut.drcov"
bad_merge "truncated BB table" "cut.drcov: truncated: the BB table holds" "$TMP/cut.drcov"
head -c 5000 /dev/urandom >"$TMP/garbage.drcov"
bad_merge "garbage" "garbage.drcov: not a drcov version 2 file" "$TMP/garbage.drcov"
head -c 60 "$TMP/a.drcov" >"$TMP/hdr.drcov"
bad_merge "header cut short" "hdr.drcov:" "$TMP/hdr.drcov"
{ cat "$TMP/a.drcov"; printf 'x'; } >"$TMP/trail.drcov"
bad_merge "bytes after the table" "trail.drcov: 1 bytes after the BB table" "$TMP/trail.drcov"
python3 - "$TMP/a.drcov" "$TMP/past.drcov" <<'PY'
import sys
d = open(sys.argv[1], "rb").read()
d = d[:-8] + (0x7fffff00).to_bytes(4, "little") + (16).to_bytes(2, "little") + (0).to_bytes(2, "little")
open(sys.argv[2], "wb").write(d)
PY
bad_merge "block past its module" "runs past the end of module 0" "$TMP/past.drcov"
expect_rc "merge: a missing file: exit 2" 2 $EFIPT coverage --merge "$TMP/a.drcov" "$TMP/none.drcov" -o "$TMP/keep.drcov"
contains "merge: a missing file: named" "$TMP/err" "none.drcov"
expect_rc "merge: needs -o" 2 $EFIPT coverage --merge "$TMP/a.drcov"

# unwritable -o: exit 2 with the cause, nothing left behind
expect_rc "unwritable -o: exit 2" 2 $EFIPT coverage --pt "$TMP/a.pt" --pe $EFI -o "$TMP/nodir/x.drcov"
contains "unwritable -o: cause named" "$TMP/err" "nodir/x.drcov"
expect_rc "drcov needs -o" 2 $EFIPT coverage --pt "$TMP/a.pt" --pe $EFI --format drcov
expect_rc "a full disk: exit 2" 2 $EFIPT coverage --pt "$TMP/a.pt" --pe $EFI --format text -o /dev/full
expect_rc "no image list: usage error" 2 $EFIPT coverage --pt "$TMP/a.pt" --raw "$EFI:0x0"

# a run directory: images.json names the module; its snapshot holds the code
D=$TMP/run
mkdir -p "$D"
printf '\061\300\377\300\350\007\000\000\000\203\370\020\165\364\377\343\205\300\164\002\220\220\303' >"$TMP/code.bin"
head -c 4096 /dev/zero >>"$TMP/code.bin"
head -c 4096 "$TMP/code.bin" >"$D/mem-0000000000001000.bin"
$EFIPT synth --raw "$D/mem-0000000000001000.bin:0x1000" --start 0x1000 --out "$D/trace.pt" --insns 3000 --truth "$TMP/run.truth" 2>/dev/null
cat >"$D/memmap.json" <<EOM
{"regions":[{"type":"LoaderCode","phys":"0x1000","pages":1,"attr":"0xf","snapshot":"mem-0000000000001000.bin"}]}
EOM
cat >"$D/images.json" <<EOM
{"images":[{"name":"Loop","base":"0x1000","size":4096,"code_type":"LoaderCode","path":"","pdb":"","entry":"0x1000"}]}
EOM
tsize=$(stat -c %s "$D/trace.pt")
cat >"$D/manifest.json" <<EOM
{"format":"efipt-run","format_version":1,"efipt_version":"0.1.0","efipt_gitrev":"x",
 "run_id":"20260101-000000-000","started":"2026-01-01T00:00:00","command":"trace",
 "command_line":"trace --decode","files":[{"name":"trace.pt","size":$tsize,"status":"written"}],
 "status":{"result":"ok","efi_status":"EFI_SUCCESS","message":"traced"}}
EOM
expect_rc "run directory: drcov" 0 $EFIPT coverage "$D" -o "$TMP/run.drcov"
check "run directory: layout and truth" $CHECK "$TMP/run.drcov" --truth "$TMP/run.truth"
contains "run directory: module named Loop.efi" "$TMP/run.drcov" "0, 0x0000000000001000, 0x0000000000002000, 0x0000000000000000, Loop.efi"
expect_rc "run directory and --pe together: usage error" 2 $EFIPT coverage "$D" --pe $EFI -o "$TMP/x.drcov"
expect_rc "a damaged run directory: exit 1" 1 $EFIPT coverage "$TMP/nodir" -o "$TMP/x.drcov"
if [ ! -e "$TMP/x.drcov" ]; then ok "damaged run directory: no output"; else nok "damaged run directory: no output" "x.drcov exists"; fi

# two --pe images: each is a module with its own entry and code size
cp $EFI "$TMP/second.efi"
expect_rc "two --pe images" 0 $EFIPT coverage --pt "$TMP/a.pt" --pe $EFI --pe "$TMP/second.efi:0x40000000" --format json -o "$TMP/two.json"
expect "two --pe images: only the executed one reported, with its code size" python3 -c "
import json; d = json.load(open('$TMP/two.json'))
assert len(d['images']) == 1 and d['images'][0]['path'] == 'efipt.efi'
assert 0 < d['images'][0]['code_size'] < d['images'][0]['size']"
$EFIPT coverage --pt "$TMP/a.pt" --pe $EFI --pe "$TMP/second.efi:0x40000000" -o "$TMP/two.drcov" 2>/dev/null
contains "two --pe images: the relocated one's base" "$TMP/two.drcov" "1, 0x0000000040000000, "
entry=$(python3 -c "
import struct; d = open('$EFI', 'rb').read(); pe = struct.unpack_from('<I', d, 0x3c)[0]
print('0x%016x' % (0x40000000 + struct.unpack_from('<I', d, pe + 24 + 16)[0]))")
contains "two --pe images: the relocated one's entry from its header" "$TMP/two.drcov" ", $entry, second.efi"
# an image too large for bitmaps (a hostile images.json): listed, said, no blocks
printf '{"images":[{"name":"huge","base":"0x100000000","size":4294967296}]}' >"$TMP/huge.json"
expect_rc "an image too large for coverage: still written" 0 $EFIPT coverage --pt "$TMP/a.pt" --pe $EFI --images "$TMP/huge.json" -o "$TMP/huge.drcov"
contains "an image too large for coverage: said" "$TMP/err" "huge.efi: 4294967296 bytes, more than coverage is kept for"
contains "an image too large for coverage: listed" "$TMP/huge.drcov" "huge.efi"

# mutated drcov files (bytes flipped, cut anywhere): merged or refused with
# exit 1, never a crash, and never an output file on refusal
mkdir -p "$TMP/mut"
python3 - "$TMP/a.drcov" "$TMP/mut" <<'PY'
import random, sys
d = open(sys.argv[1], "rb").read()
r = random.Random(7)
for i in range(150):
    m = bytearray(d)
    if i % 3 == 0:
        m = m[: r.randrange(len(m))]
    for _ in range(r.randrange(1, 6)):
        p = r.randrange(min(len(m), 400)) if i % 2 else r.randrange(len(m) or 1)
        if m:
            m[p % len(m)] = r.randrange(256)
    open("%s/%03d.drcov" % (sys.argv[2], i), "wb").write(bytes(m))
PY
merged_cleanly "merge: 150 mutated drcov files merged or refused cleanly" "$TMP"/mut/*.drcov --

# a drcov file as DynamoRIO writes it on Linux (more columns, padded):
# merged with efipt's by module path
python3 - "$TMP/dr.drcov" <<'PY'
import sys
hdr = "DRCOV VERSION: 2\nDRCOV FLAVOR: drcov\nModule Table: version 2, count 2\n"
hdr += "Columns: id, containing_id, start, end, entry, offset, checksum, timestamp, path\n"
hdr += "  0,   0, 0x00007f0000000000, 0x00007f0000001000, 0x0000000000000000, 00000000, 0x00000000, 0x00000000, /usr/lib/libc.so.6\n"
hdr += "  1,   1, 0x0000000000000000, 0x0000000000060000, 0x0000000000001000, 00000000, 0x00000000, 0x00000000, efipt.efi\n"
hdr += "BB Table: 2 bbs\n"
bb = b"".join(s.to_bytes(4, "little") + z.to_bytes(2, "little") + m.to_bytes(2, "little")
              for s, z, m in ((0x10, 4, 0), (0x20000, 3, 1)))
open(sys.argv[1], "wb").write(hdr.encode() + bb)
PY
expect_rc "merge: a DynamoRIO-style file" 0 $EFIPT coverage --merge "$TMP/a.drcov" "$TMP/dr.drcov" -o "$TMP/adr.drcov"
check "merge: DynamoRIO-style: union by module path" $CHECK "$TMP/adr.drcov" --union "$TMP/a.drcov" "$TMP/dr.drcov"
contains "merge: DynamoRIO-style: its other module kept" "$TMP/adr.drcov" "1, 0x00007f0000000000, 0x00007f0000001000, 0x0000000000000000, /usr/lib/libc.so.6"

# a nested image (a region of a bigger one listed too): the innermost image
# owns its range in coverage and in top alike, each instruction counts once,
# and the overlap is said
python3 - "$TMP/a.truth" "$TMP/nested.json" "$TMP/nested.want" <<'PY'
import sys
addrs = [int(l, 16) for l in open(sys.argv[1])]
d = sorted(set(addrs))
lo = d[len(d) // 3] & ~0xff
hi = lo + 0x800
open(sys.argv[2], "w").write('{"images": [{"name": "efipt.efi", "base": "0x0", "size": 401408},'
                             ' {"name": "Inner", "base": "%#x", "size": %d}]}' % (lo, hi - lo))
inner = [a for a in addrs if lo <= a < hi]
outer = [a for a in addrs if not lo <= a < hi]
open(sys.argv[3], "w").write("%d %d %d %d" % (len(set(outer)), len(set(inner)), len(outer), len(inner)))
PY
expect_rc "nested image: coverage" 0 $EFIPT coverage --pt "$TMP/a.pt" --pe $EFI --images "$TMP/nested.json" --format json -o "$TMP/nested.cov"
contains "nested image: coverage says which image owns the overlap" "$TMP/err" "image Inner.efi (0x"
contains "nested image: ... by the rule" "$TMP/err" "lies inside image efipt.efi (0x0-0x61fff): its addresses count for Inner.efi"
$EFIPT top --pt "$TMP/a.pt" --pe $EFI --images "$TMP/nested.json" --by image --format csv >"$TMP/nested.top" 2>"$TMP/nested.err"
got=$(python3 -c '
import csv, json, sys
c = {i["path"]: i["insns"] for i in json.load(open(sys.argv[1]))["images"]}
t = {r["image"]: int(r["insns"]) for r in csv.DictReader(open(sys.argv[2]))}
print(c.get("efipt.efi"), c.get("Inner.efi"), t.get("efipt.efi"), t.get("Inner"), t.get("[unknown]", 0) + json.load(open(sys.argv[1]))["outside"])
' "$TMP/nested.cov" "$TMP/nested.top" 2>&1)
want="$(cat "$TMP/nested.want") 0"
if [ "$got" = "$want" ]; then ok "nested image: coverage and top count each instruction for its innermost image ($want)"; else nok "nested image: coverage and top by the same rule" "got '$got', truth '$want'"; fi
contains "nested image: top says it too" "$TMP/nested.err" "its addresses count for Inner"

# --fail-under takes the percentage as printed, with its decimal
pct=$(python3 -c "import json; print(json.load(open('$TMP/a.json'))['total']['percent'])")
expect_rc "--fail-under at the printed percentage (with its decimal) passes" 0 $EFIPT coverage --pt "$TMP/a.pt" --pe $EFI --fail-under "$pct"
# (two tenths when one would be a whole number, which is shown without one)
above=$(python3 -c "a = round(float('$pct') * 10) + 1; a += a % 10 == 0; print('%d.%d' % (a // 10, a % 10))")
expect_rc "--fail-under one tenth above fails" 3 $EFIPT coverage --pt "$TMP/a.pt" --pe $EFI --fail-under "$above"
contains "--fail-under: the decimal named" "$TMP/err" "is below --fail-under $above%"
expect_rc "--fail-under with two decimals: refused" 2 $EFIPT coverage --pt "$TMP/a.pt" --pe $EFI --fail-under 4.25
contains "--fail-under: says what it takes" "$TMP/err" "with at most one decimal"

# lcov: a tracefile with nothing in it is refused (no symbols, or symbols
# with no source lines), nothing written; -o FILE.info means lcov;
# --symbols with another format says what it is for
rm -f "$TMP/none.info"
expect_rc "lcov without symbols: nothing to write, exit 2" 2 $EFIPT coverage --pt "$TMP/a.pt" --pe $EFI --format lcov -o "$TMP/none.info"
contains "lcov without symbols: said" "$TMP/err" "nothing to write to $TMP/none.info: no traced image has a symbol file with source lines"
[ ! -e "$TMP/none.info" ] && ok "lcov without symbols: no file" || nok "lcov without symbols: no file" "$(ls -l "$TMP/none.info")"
mkdir -p "$TMP/stripped"
objcopy --strip-debug build/efipt.so "$TMP/stripped/efipt.so"
expect_rc "lcov with a symbol file of no lines (its .symtab only): exit 2" 2 $EFIPT coverage --pt "$TMP/a.pt" --pe $EFI --format lcov -o "$TMP/none.info" --symbols "$TMP/stripped/efipt.so"
expect_rc "-o FILE.info without --format: lcov" 0 $EFIPT coverage --pt "$TMP/a.pt" --pe $EFI -o "$TMP/by-name.info" --symbols build/efipt.so
if head -2 "$TMP/by-name.info" | grep -q '^SF:'; then ok "-o FILE.info: an lcov tracefile"; else nok "-o FILE.info: an lcov tracefile" "$(head -3 "$TMP/by-name.info")"; fi
expect_rc "--symbols with --format text: refused" 2 $EFIPT coverage --pt "$TMP/a.pt" --pe $EFI --format text --symbols build/efipt.so
contains "--symbols with --format text: says it is for lcov" "$TMP/err" "--symbols is for the source lines and functions of --format lcov"
# one 'efipt coverage:' prefix in every message
expect_rc "unwritable -o (text): exit 2" 2 $EFIPT coverage --pt "$TMP/a.pt" --pe $EFI -o "$TMP/nodir/x.txt"
cat "$TMP/err" >>"$TMP/prefix.err"
expect_rc "unwritable --merge -o: exit 2" 2 $EFIPT coverage --merge "$TMP/a.drcov" -o "$TMP/nodir/x.drcov"
cat "$TMP/err" >>"$TMP/prefix.err"
$EFIPT coverage --merge "$TMP/by-name.info" -o "$TMP/nodir/x.info" 2>>"$TMP/prefix.err"
if grep -q "efipt efipt" "$TMP/prefix.err" || ! grep -q "^efipt coverage: $TMP/nodir/x.drcov" "$TMP/prefix.err"; then nok "messages: one 'efipt coverage:' prefix" "$(cat "$TMP/prefix.err")"; else ok "messages: one 'efipt coverage:' prefix"; fi

# drcov files as DynamoRIO writes them (ext/drcovlib: module table versions
# 2 to 5, Linux and Windows columns, segments of one module sharing a
# containing_id with block offsets from their own start, a text BB table,
# id 65535 for code in no module), written here from that description:
# --merge unites them by module path, offsets made module-relative
python3 - "$TMP/dr" <<'PY'
import sys
out = sys.argv[1]
def bb(blocks):
    return b"".join(s.to_bytes(4, "little") + z.to_bytes(2, "little") + m.to_bytes(2, "little")
                    for s, z, m in blocks)
def write(name, version, cols, mods, blocks, text=False):
    h = "DRCOV VERSION: 2\nDRCOV FLAVOR: drcov-64\n"
    h += "Module Table: version %d, count %d\nColumns: %s\n" % (version, len(mods), ", ".join(cols))
    for m in mods:
        h += m + "\n"
    h += "BB Table: %d bbs\n" % len(blocks)
    if text:
        h += "module id, start, size:\n" + "".join(
            "module[%3u]: 0x%016x, %3u\n" % (m, s, z) for s, z, m in blocks)
        open(out + name, "wb").write(h.encode())
    else:
        open(out + name, "wb").write(h.encode() + bb(blocks))
# v2, Windows columns
write("2.drcov", 2, ["id", "base", "end", "entry", "checksum", "timestamp", "path"],
      ["  0, 0x0000000140000000, 0x0000000140010000, 0x0000000140001000, 0x00000000, 0x5f000000, C:\\fw\\Drv.efi"],
      [(0x1000, 16, 0), (0x2000, 8, 0)])
# v3, Linux: Drv in two segments (the second at +0x8000), blocks from each start
write("3.drcov", 3, ["id", "containing_id", "start", "end", "entry", "path"],
      ["  0,   0, 0x0000000050000000, 0x0000000050004000, 0x0000000050001000, C:\\fw\\Drv.efi",
       "  1,   0, 0x0000000050008000, 0x000000005000a000, 0x0000000000000000, C:\\fw\\Drv.efi",
       "  2,   2, 0x00007f0000000000, 0x00007f0000001000, 0x0000000000000000, /lib/other.so"],
      [(0x1008, 16, 0), (0x10, 4, 1), (0x100, 2, 2), (0xdeadbeef, 5, 65535)])
# v4: offset column (hex without 0x)
write("4.drcov", 4, ["id", "containing_id", "start", "end", "entry", "offset", "path"],
      ["  0,   0, 0x0000000060000000, 0x0000000060010000, 0x0000000060001000, 0000000000000000, C:\\fw\\Drv.efi"],
      [(0x3000, 32, 0)])
# v5, Windows, text BB table
write("5.drcov", 5, ["id", "containing_id", "start", "end", "entry", "offset", "preferred_base",
                     "checksum", "timestamp", "path"],
      ["  0,   0, 0x0000000070000000, 0x0000000070010000, 0x0000000070001000, 0000000000000000, "
       "0x0000000140000000, 0x00000000, 0x5f000000,  C:\\fw\\Drv.efi"],
      [(0x4000, 7, 0), (0x1000, 4, 0)], text=True)
# what their union covers, per path: module-relative bytes
cov = {"C:\\fw\\Drv.efi": set(), "/lib/other.so": set()}
for s, z in [(0x1000, 16), (0x2000, 8), (0x1008, 16), (0x8010, 4), (0x3000, 32), (0x4000, 7), (0x1000, 4)]:
    cov["C:\\fw\\Drv.efi"].update(range(s, s + z))
cov["/lib/other.so"].update(range(0x100, 0x102))
open(out + ".want", "w").write(repr(sorted((k, sorted(v)) for k, v in cov.items())))
PY
for v in 2 3 4 5; do
	expect_rc "merge: a drcov file with a version $v module table" 0 $EFIPT coverage --merge "$TMP/dr$v.drcov" -o "$TMP/dr$v.out"
done
expect_rc "merge: drcov module tables 2 to 5 together" 0 $EFIPT coverage --merge "$TMP/dr2.drcov" "$TMP/dr3.drcov" "$TMP/dr4.drcov" "$TMP/dr5.drcov" -o "$TMP/drall.drcov"
contains "merge: blocks in no module (id 65535) said" "$TMP/err" "1 blocks in no module (module id 65535"
expect "merge: the union by path, segments' blocks made module-relative" python3 -c "
import sys
d = open('$TMP/drall.drcov', 'rb').read()
head, _, rest = d.partition(b'BB Table: ')
lines = head.decode().splitlines()
mods = [l.split(', ', 4) for l in lines[4:]]
n = int(rest.split(b' ')[0])
bb = rest[rest.index(b'\n') + 1:]
assert len(bb) == 8 * n, (len(bb), n)
cov = {m[4]: set() for m in mods}
for i in range(n):
    s = int.from_bytes(bb[8*i:8*i+4], 'little'); z = int.from_bytes(bb[8*i+4:8*i+6], 'little'); m = int.from_bytes(bb[8*i+6:8*i+8], 'little')
    cov[mods[m][4]].update(range(s, s + z))
got = repr(sorted((k, sorted(v)) for k, v in cov.items()))
assert got == open('$TMP/dr.want').read(), got[:300]
assert [m[1] for m in mods if m[4] == 'C:\\\\fw\\\\Drv.efi'] == ['0x0000000140000000'], mods"
# a legacy version 1 table and custom columns: refused, said why
printf 'DRCOV VERSION: 2\nDRCOV FLAVOR: drcov\nModule Table: 1\n 0, 4096, /bin/x\nBB Table: 0 bbs\n' >"$TMP/dr1.drcov"
expect_rc "merge: a version 1 module table: refused" 1 $EFIPT coverage --merge "$TMP/dr1.drcov" -o "$TMP/dr1.out"
contains "merge: version 1 said" "$TMP/err" "a version 1 module table (DynamoRIO 6): it has no module bases"

# image names with control characters and ", " (an images.json is
# untrusted): every format escapes or replaces them
printf '{"images": [{"name": "Evil\\u001b[31m, x\\nnext", "base": "0x0", "size": 401408}]}' >"$TMP/evil.json"
expect_rc "evil name: drcov" 0 $EFIPT coverage --pt "$TMP/a.pt" --pe $EFI --images "$TMP/evil.json" -o "$TMP/evil.drcov"
expect "evil name: the drcov module line holds no control byte and no ', ' in its path" python3 -c "
d = open('$TMP/evil.drcov', 'rb').read().split(b'BB Table')[0]
line = [l for l in d.split(b'\n') if b'Evil' in l][0]
assert line.count(b', ') == 4 and not any(c < 32 for c in line), line"
check "evil name: drcov layout (independent reader)" $CHECK "$TMP/evil.drcov"
expect_rc "evil name: merge keeps it safe" 0 $EFIPT coverage --merge "$TMP/evil.drcov" "$TMP/evil.drcov" -o "$TMP/evil2.drcov"
if cmp -s "$TMP/evil.drcov" "$TMP/evil2.drcov"; then ok "evil name: merged with itself, the same file"; else nok "evil name: merged with itself" "differs"; fi
$EFIPT top --pt "$TMP/a.pt" --pe $EFI --images "$TMP/evil.json" --format csv >"$TMP/evil.csv" 2>/dev/null
if python3 -c "
d = open('$TMP/evil.csv', 'rb').read()
assert not any(c < 32 and c != 10 for c in d) and d.count(b'\n') == len(d.splitlines()) and b'Evil\\\\x1b[31m, x\\\\nnext' in d, d[:200]"; then ok "evil name: CSV escapes control characters"; else nok "evil name: CSV escapes control characters" "$(head -c 200 "$TMP/evil.csv" | od -c | head -5)"; fi
# the same readers over mutated files of each kind: merged or refused with
# exit 1, never a crash, never an output file on refusal
mkdir -p "$TMP/mut2"
python3 - "$TMP/mut2" "$TMP/dr3.drcov" "$TMP/dr5.drcov" <<'PY'
import random, sys
r = random.Random(11)
for n, src in enumerate(sys.argv[2:]):
    d = open(src, "rb").read()
    for i in range(60):
        m = bytearray(d)
        if i % 3 == 0:
            m = m[: r.randrange(len(m))]
        for _ in range(r.randrange(1, 5)):
            if m:
                m[r.randrange(len(m))] = r.choice([r.randrange(256), ord(","), ord("\n"), ord("0"), ord("f")])
        open("%s/%d-%02d.drcov" % (sys.argv[1], n, i), "wb").write(bytes(m))
PY
merged_cleanly "merge: 120 mutated drcov files of tables 3 and 5 (text) merged or refused cleanly" "$TMP"/mut2/*.drcov --
