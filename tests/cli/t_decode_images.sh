# efipt decode on a run directory whose images.json is hostile: an image
# range that runs past 2^64 once made the summary loop forever. It is refused
# with the image named; a range that ends exactly at 2^64 is fine.
. tests/lib.sh
D=$TMP/run
mkdir -p "$D"
# nop; nop; jnz -4; jmp -6: a loop at the top of the address space
printf '\220\220\165\374\353\372' >"$TMP/code.bin"
head -c 4090 /dev/zero >>"$TMP/code.bin"
base=0xffffffffffff0000
cp "$TMP/code.bin" "$D/mem-ffffffffffff0000.bin"
$EFIPT synth --out "$D/trace.pt" --raw "$TMP/code.bin:$base" --start $base --insns 1000 >/dev/null 2>&1 ||
	nok "decode images: test trace" "efipt synth failed"
cat >"$D/memmap.json" <<EOM
{"regions": [{"type": "BootServicesCode", "phys": "$base", "pages": 1, "attr": "0xf", "snapshot": "mem-ffffffffffff0000.bin"}]}
EOM
# run_dir IMAGE_SIZE: images.json with one image of that size at $base
run_dir() {
	cat >"$D/images.json" <<EOM
{"images": [{"name": "Top", "base": "$base", "size": $1, "code_type": "BootServicesCode", "path": "", "pdb": ""}]}
EOM
	files=""
	for f in trace.pt memmap.json images.json mem-ffffffffffff0000.bin; do
		files="$files${files:+,}{\"name\":\"$f\",\"size\":$(stat -c %s "$D/$f"),\"status\":\"written\"}"
	done
	cat >"$D/manifest.json" <<EOM
{"format":"efipt-run","format_version":1,"efipt_version":"0.1.0","efipt_gitrev":"x",
 "run_id":"20260101-000000-000","started":"2026-01-01T00:00:00","command":"trace",
 "command_line":"trace","firmware":{"vendor":"EDK II","revision":"0x1","uefi":"2.7"},
 "cpu":{"vendor":"GenuineIntel","signature":"0x000506e3","family":6,"model":94,"stepping":3},
 "files":[$files],
 "status":{"result":"ok","efi_status":"EFI_SUCCESS","message":"trace"}}
EOM
}

run_dir 65536 # [base, 2^64): ends exactly at the top
expect_rc "decode images: range ending at 2^64 decodes" 0 timeout 20 $EFIPT decode "$D"
contains "decode images: every instruction in the top image" "$TMP/out" "100.0%  Top (0xffffffffffff0000)"

run_dir 131072 # base + size wraps past 2^64
expect_rc "decode images: range past 2^64 refused, no hang" 1 timeout 20 $EFIPT decode "$D"
contains "decode images: the image and the reason named" "$TMP/err" "images.json: image 0: base 0xffffffffffff0000, size 131072: the range runs past 2^64"

$EFIPT insn --run "$D" --stat >"$TMP/out" 2>"$TMP/err"
rc=$?
[ "$rc" -ne 0 ] && grep -qF "runs past 2^64" "$TMP/err" && ok "insn --run: the same images.json refused" ||
	nok "insn --run: the same images.json refused" "exit $rc: $(head -c 200 "$TMP/err")"

run_dir -4096
expect_rc "decode images: negative size refused" 1 timeout 20 $EFIPT decode "$D"
contains "decode images: negative size named" "$TMP/err" "images.json: image 0: base 0xffffffffffff0000, size -4096: the range has a negative size"
