# Code that changes while traced (codechanges.bin, docs/format.md): a UEFI
# app (tests/qemu/smc_app.c) writes a function into a page, calls it, writes
# another over it, calls that, writes the first back and calls it again,
# between the trace markers. The plugin records each change at its trace
# position; efipt decodes every call with the code that ran then, exactly
# the instructions the logging plugin saw. A damaged codechanges.bin is
# refused with its offset. Then a whole OVMF boot through efipt.efi
# snapshot decodes with zero errors and the logger's instruction count.
. tests/lib.sh
. tests/qemu/lib_qemu.sh

plugin_output "code changes"
d=$TMP/smc
marker_app_trace "code changes" "$d" build/tests/smc_app.efi
decoded_equals_log "code changes" "$d" "start marker to stop marker, every version of the code"

# the page's two versions, each decoded where it ran (the disassembly too):
# count_up (xor eax,eax at the page) twice, count_down (mov eax,0xa) once
# in between
$EFIPT insn --run "$d/run" >"$d/text.txt" 2>&1
expect "code changes: the page decodes as its first, second and first code again" python3 -c "
lines = [l.split(None, 1) for l in open('$d/text.txt') if not l.startswith('[')]
seq = [t.strip() for a, t in lines if int(a, 16) % 4096 == 0]
assert seq == ['xor eax, eax', 'mov eax, 0x0A', 'xor eax, eax'], seq"
expect "code changes: the manifest counts them and codechanges.bin holds them" python3 -c "
import json, os
t = json.load(open('$d/run/manifest.json'))['trace']
n = t['code_changes']
assert n >= 2 and t['code_conflicts'] >= n, t
assert os.path.getsize('$d/run/codechanges.bin') == 16 + 40 * n"
n=$(python3 -c "import json; print(json.load(open('$d/run/manifest.json'))['trace']['code_changes'])")
expect_rc "code changes: efipt info reads the run" 0 $EFIPT info "$d/run"
contains "code changes: efipt info says how many" "$TMP/out" "Code changes $n "

# without the changes the page holds only its first code: the second call
# cannot decode as it ran (what every run did before codechanges.bin)
cp -r "$d/run" "$d/old"
rm "$d/old/codechanges.bin"
python3 -c "
import json; p = '$d/old/manifest.json'; m = json.load(open(p)); del m['trace']['code_changes']
json.dump(m, open(p, 'w'))"
$EFIPT insn --run "$d/old" --no-inst >"$d/old.txt" 2>"$d/old.err"
rc=$?
if [ "$rc" -ne 0 ] || ! python3 tests/qemu/insnlog_cmp.py "$d/log.bin" "$d/old.txt" \
	"$d/old/manifest.json" "$fc" --whole >/dev/null 2>&1; then
	ok "code changes: without codechanges.bin the run does not decode as it ran"
else
	nok "code changes: without codechanges.bin the run does not decode as it ran" "it did"
fi

# damaged files: refused, naming the file and the offset (the manifest's
# "files" entry made to agree, so that codechanges.bin's own checks act)
files() { # files SIZE|none: codechanges.bin's entry in $d/bad's manifest
	python3 -c "
import json, sys; p = '$d/bad/manifest.json'; m = json.load(open(p))
f = [e for e in m['files'] if e['name'] != 'codechanges.bin']
if sys.argv[1] != 'none': f.append({'name': 'codechanges.bin', 'size': int(sys.argv[1]), 'status': 'written'})
m['files'] = f; json.dump(m, open(p, 'w'))" "$1"
}
cp -r "$d/run" "$d/bad"
f=$d/bad/codechanges.bin
head -c $((16 + 40 * n - 3)) "$d/run/codechanges.bin" >"$f"
files $((16 + 40 * n - 3))
expect_rc "code changes: a cut codechanges.bin is refused" 2 $EFIPT insn --run "$d/bad" --no-inst
contains "code changes: ... naming its last record's offset" "$TMP/err" \
	"codechanges.bin: offset $((16 + 40 * (n - 1))): the last record is cut short"
cp "$d/run/codechanges.bin" "$f"
files $((16 + 40 * n))
printf 'EFIPTCC2' | dd of="$f" conv=notrunc status=none
expect_rc "code changes: a file of another format is refused by efipt info" 1 $EFIPT info "$d/bad"
contains "code changes: ... saying so" "$TMP/err" "codechanges.bin: offset 0: not a code change file"
cp "$d/run/codechanges.bin" "$f"
printf '\021' | dd of="$f" bs=1 seek=$((16 + 18)) conv=notrunc status=none
expect_rc "code changes: a record of 17 bytes is refused" 2 $EFIPT insn --run "$d/bad" --no-inst
contains "code changes: ... naming the record" "$TMP/err" "offset 16 (record 0): a code length of 0 or above 16"
cp "$d/run/codechanges.bin" "$f"
head -c $((16 + 40 * (n - 1))) "$d/run/codechanges.bin" >"$f"
files $((16 + 40 * (n - 1)))
expect_rc "code changes: fewer changes than the manifest counts are refused" 2 \
	$EFIPT insn --run "$d/bad" --no-inst
contains "code changes: ... with both counts" "$TMP/err" \
	"codechanges.bin: $((n - 1)) code changes, manifest.json says $n"
rm "$f"
files none
expect_rc "code changes: a missing codechanges.bin is refused when the manifest counts changes" 2 \
	$EFIPT insn --run "$d/bad" --no-inst
contains "code changes: ... saying how many" "$TMP/err" "codechanges.bin: missing; manifest.json says $n code changes"

# A boot from the reset vector that goes on to run an application (efipt.efi
# snapshot, which powers off): memory freed and reused, code decompressed
# and relocated (about 1e9 instructions, ~2 minutes here). It decodes with
# zero errors and exactly the logger's count of what ran (as
# t_qemu_reset.sh counts: QEMU ends inside the logger's callback, and a
# branch there is left out of the trace).
b=$TMP/boot
mkdir -p "$b"
sh ovmf/mkesp.sh --image "$b/esp.img" --args "snapshot --shutdown" >/dev/null
# shellcheck disable=SC2046,SC2086
expect_rc "boot: efipt qemu traces OVMF from the reset vector through efipt.efi snapshot" 0 \
	nice -n 10 timeout 900 $EFIPT qemu -o "$b/run" --no-esp -- $(ovmf_args "$b") \
	-drive format=raw,file="$b/esp.img" \
	-plugin "$LOGGER,out=/dev/null,head=0,count=$b/count.txt"
expect_rc "boot: efipt decode reads it" 0 $EFIPT decode "$b/run"
mv "$TMP/out" "$b/decode.txt"
contains "boot: no decode errors" "$b/decode.txt" "Errors        0"
count_equals_log boot "$b" '5 * 10**8' "code changed while traced" "assert t['code_changes'] > 0, t"
