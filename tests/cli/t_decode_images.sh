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
	run_manifest "$D" trace.pt memmap.json images.json mem-ffffffffffff0000.bin
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
# the analyses read --images FILE with the same checks and words
expect_rc "top --images: the same images.json refused" 2 $EFIPT top --pt "$D/trace.pt" \
	--raw "$TMP/code.bin:$base" --images "$D/images.json"
contains "top --images: the image and the reason named" "$TMP/err" \
	"$D/images.json: image 0: base 0xffffffffffff0000, size 131072: the range runs past 2^64"
echo '{"images": [{"name": "Top", "base": 4096, "size": 4096}]}' >"$TMP/num.json"
expect_rc "top --images: a numeric base refused" 2 $EFIPT top --pt "$D/trace.pt" \
	--raw "$TMP/code.bin:$base" --images "$TMP/num.json"
contains "top --images: what a malformed image lacks named" "$TMP/err" \
	"$TMP/num.json: image 0 is malformed (name, base \"0x...\", integer size)"
expect_rc "top --images: a device refused" 2 $EFIPT top --pt "$D/trace.pt" \
	--raw "$TMP/code.bin:$base" --images /dev/null
contains "top --images: a device refused by the command's name" "$TMP/err" \
	"efipt top: /dev/null: a device, not a regular file"

run_dir -4096
expect_rc "decode images: negative size refused" 1 timeout 20 $EFIPT decode "$D"
contains "decode images: negative size named" "$TMP/err" "images.json: image 0: base 0xffffffffffff0000, size -4096: the range has a negative size"
