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
