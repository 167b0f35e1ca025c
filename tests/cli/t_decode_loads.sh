# efipt.efi's images loaded while a hardware trace ran (efi/load_watch.c):
# with a trace position, their code comes from codechanges.bin, even where
# the snapshots hold nothing; without one (the buffer wrapped), the decoder
# says so, naming the image, rather than decode as if nothing happened.
. tests/lib.sh
D=$TMP/run
mkdir -p "$D"
# nop; nop; jnz -4; jmp -6: a loop that the trace runs
printf '\220\220\165\374\353\372' >"$TMP/code.bin"
head -c 4090 /dev/zero >>"$TMP/code.bin"
base=0x10000
cp "$TMP/code.bin" "$D/mem-10000.bin"
$EFIPT synth --out "$D/trace.pt" --raw "$TMP/code.bin:$base" --start $base --insns 1000 >/dev/null 2>&1 ||
	nok "decode loads: test trace" "efipt synth failed"
cat >"$D/memmap.json" <<EOM
{"regions": [{"type": "BootServicesCode", "phys": "$base", "pages": 1, "attr": "0xf", "snapshot": "mem-10000.bin"}]}
EOM
echo '{"images": []}' >"$D/images.json"
# loads JSON FILES...: the manifest with "loaded_while_traced" = JSON
loads() {
	json=$1
	shift
	run_manifest "$D" "$@"
	python3 - "$D/manifest.json" "$json" <<'EOP'
import json, sys
m = json.load(open(sys.argv[1]))
m["loaded_while_traced"] = json.loads(sys.argv[2])
json.dump(m, open(sys.argv[1], "w"))
EOP
}
img='{"name": "Second", "base": "0x20000", "size": 4096, "code_type": "BootServicesCode", "path": "", "pdb": ""}'

loads "[{\"image\": $img, \"position\": null, \"why\": \"the trace wrapped: older trace was overwritten\"}]" \
	trace.pt memmap.json images.json mem-10000.bin
expect_rc "decode loads: a load without a position decodes" 0 timeout 20 $EFIPT decode "$D"
contains "decode loads: ... and is said, with the image and why" "$TMP/err" \
	"note: image Second at 0x20000 was loaded while traced, at a place in the trace that is not known (the trace wrapped"

# with its position: codechanges.bin holds its code (where no snapshot is)
python3 - "$D/codechanges.bin" <<'EOP'
import struct, sys
code = bytes([0x90] * 16)
rec = struct.pack("<QQHBBH2x", 100, 0x20000, 0, 16, 0, 0) + code
open(sys.argv[1], "wb").write(b"EFIPTCC1" + struct.pack("<II", 40, 0) + rec)
EOP
loads "[{\"image\": $img, \"position\": 100}]" trace.pt memmap.json images.json mem-10000.bin codechanges.bin
expect_rc "decode loads: a load with its position decodes" 0 timeout 20 $EFIPT decode "$D"
if grep -q "note: image" "$TMP/err"; then
	nok "decode loads: a placed load is not a note" "$(head -c 300 "$TMP/err")"
else
	ok "decode loads: a placed load is not a note"
fi
expect_rc "decode loads: efipt info reads its record" 0 timeout 20 $EFIPT info "$D"
contains "decode loads: ... Code changes 1" "$TMP/out" "Code changes 1"

# --- an image loaded while traced, with its symbols -------------------------
# efipt.efi itself stands in for an image LoadImage put at 0x1000000 while
# the trace ran, over memory that the snapshot (taken before) shows holding
# other bytes (0xcc): its record in images.json has "loaded_at" (as
# efi/load_watch.c writes it after the trace), its code sections are in
# codechanges.bin from that position on. efipt top, calls and coverage
# with --symbols must name its functions: the symbol file is checked
# against the code the image had from its load on, not the snapshot's.
build_output "decode loads"
L=$TMP/loaded
mkdir -p "$L"
python3 - "$EFI" "$L" "$BASE" <<'EOP'
import json, struct, sys
pe, out, base = open(sys.argv[1], "rb").read(), sys.argv[2], int(sys.argv[3], 16)
o = struct.unpack_from("<I", pe, 0x3c)[0]
nsec, optsz = struct.unpack_from("<HH", pe, o + 6)[0], struct.unpack_from("<H", pe, o + 20)[0]
size, hdrs = struct.unpack_from("<II", pe, o + 24 + 56)
img = bytearray(size)
img[:hdrs] = pe[:hdrs]
code = []
for i in range(nsec):
    s = o + 24 + optsz + 40 * i
    vsize, va, rawsz, raw = struct.unpack_from("<IIII", pe, s + 8)
    chars = struct.unpack_from("<I", pe, s + 36)[0]
    img[va:va + min(vsize, rawsz)] = pe[raw:raw + min(vsize, rawsz)]
    if chars & 0x20000000:
        code.append((va, vsize))
pages = (size + 4095) // 4096
open("%s/mem-%x.bin" % (out, base), "wb").write(b"\xcc" * pages * 4096)
json.dump({"regions": [{"type": "BootServicesCode", "phys": hex(base), "pages": pages,
                        "attr": "0xf", "snapshot": "mem-%x.bin" % base}]},
          open(out + "/memmap.json", "w"))
json.dump({"images": [{"name": "efipt.efi", "base": hex(base), "size": size,
                       "code_type": "LoaderCode", "path": "\\EFI\\efipt.efi", "pdb": "",
                       "code": [{"rva": hex(va), "size": n} for va, n in code],
                       "loaded_at": 0}]}, open(out + "/images.json", "w"))
recs = b""
for va, n in code:
    for a in range(va, va + n, 16):
        k = min(16, va + n - a)
        recs += struct.pack("<QQHBBH2x", 0, base + a, 0, k, 0, 0) + bytes(img[a:a + k]).ljust(16, b"\0")
open(out + "/codechanges.bin", "wb").write(b"EFIPTCC1" + struct.pack("<II", 40, 0) + recs)
EOP
$EFIPT synth --out "$L/trace.pt" $PE --insns 20000 >/dev/null 2>&1 || nok "decode loads: loaded image trace" "efipt synth failed"
run_manifest "$L" trace.pt memmap.json images.json "mem-${BASE#0x}.bin" codechanges.bin
expect_rc "loaded image: efipt symbols finds its symbol file" 0 $EFIPT symbols "$L" --symbols "$SO"
contains "loaded image: ... checked against its code from codechanges.bin" "$TMP/out" "code: equal to the image"
expect_rc "loaded image: efipt top --symbols" 0 $EFIPT top "$L" --symbols "$SO" --format csv
if grep -q '^"efipt.efi","efi_main"' "$TMP/out"; then
	ok "loaded image: top names its functions (efi_main)"
else
	nok "loaded image: top names its functions (efi_main)" "$(head -5 "$TMP/out")"
fi
expect_rc "loaded image: efipt calls --symbols" 0 $EFIPT calls "$L" --symbols "$SO"
contains "loaded image: calls names efi_main" "$TMP/out" "efi_main"
expect_rc "loaded image: efipt coverage --symbols (lcov)" 0 $EFIPT coverage "$L" --symbols "$SO" --format lcov -o "$TMP/cov.info"
contains "loaded image: coverage names efi_main (FN)" "$TMP/cov.info" ",efi_main"
# the snapshot's bytes are not the image's: without "loaded_at" its symbol
# file is refused (what the host did before it knew the load)
python3 - "$L/images.json" <<'EOP'
import json, sys
j = json.load(open(sys.argv[1]))
del j["images"][0]["loaded_at"]
json.dump(j, open(sys.argv[1], "w"))
EOP
run_manifest "$L" trace.pt memmap.json images.json "mem-${BASE#0x}.bin" codechanges.bin
expect_rc "loaded image: without loaded_at" 0 $EFIPT symbols "$L" --symbols "$SO"
contains "loaded image: ... the snapshot's code refuses the symbol file" "$TMP/out" "symbols: none"
python3 - "$L/images.json" <<'EOP'
import json, sys
j = json.load(open(sys.argv[1]))
j["images"][0]["loaded_at"] = "soon"
json.dump(j, open(sys.argv[1], "w"))
EOP
run_manifest "$L" trace.pt memmap.json images.json "mem-${BASE#0x}.bin" codechanges.bin
expect_rc "loaded image: a loaded_at that is no position is refused" 2 $EFIPT symbols "$L"
contains "loaded image: ... and named" "$TMP/err" "\"loaded_at\" must be a trace position"
# images.json is untrusted: a loaded image of 1 TiB (no code anywhere) is
# checked against a symbol file at the cost of what that file holds
python3 - "$L/images.json" <<'EOP'
import json, sys
j = json.load(open(sys.argv[1]))
j["images"][0]["loaded_at"] = 0
j["images"].append({"name": "efipt", "base": "0x100000000", "size": 1 << 40, "loaded_at": 0})
json.dump(j, open(sys.argv[1], "w"))
EOP
run_manifest "$L" trace.pt memmap.json images.json "mem-${BASE#0x}.bin" codechanges.bin
expect_rc "loaded image: a 1 TiB loaded image is checked quickly" 0 timeout 20 $EFIPT symbols "$L" --symbols "$SO"
if python3 - "$TMP/out" <<'EOP'
import re, sys
b = [b for b in re.split(r"\n(?=\S)", open(sys.argv[1]).read()) if b.startswith("efipt  0x0000000100000000")]
assert len(b) == 1 and "symbols: none" in b[0], b
EOP
then ok "loaded image: ... and given no symbols (its code is all unknown)"
else nok "loaded image: ... and given no symbols (its code is all unknown)" "$(head -c 400 "$TMP/out")"
fi
