# A whole OVMF boot from the reset vector to the UEFI Shell under
# `efipt qemu --start reset` (docs/qemu.md "Real mode", "Tests"): 16-bit
# code at CS base 0xFFFF0000, 32-bit SEC/PEI, 64-bit DXE/BDS. It must decode
# with zero errors to exactly as many instructions as the independent
# logger (tests/qemu/insnlog.c, in the same QEMU process) counted, and its
# first instructions must be exactly the logged ones, by efipt and by
# libipt. -icount makes the run the same every time.
. tests/lib.sh
. tests/qemu/lib_qemu.sh

plugin_output "qemu reset"

# the logger ends QEMU after 1.2e9 executions (REP iterations each): the Shell is up by then
# (about 1.03e9 instructions) and waits for startup.nsh
LIMIT=1200000000
HEAD=3000000
WINDOW=2000000
d=$TMP/boot
mkdir -p "$d"
cp /usr/share/OVMF/OVMF_VARS_4M.fd "$d/vars.fd"
expect_rc "reset: efipt qemu traces the boot from the reset vector" 0 nice -n 10 timeout 300 \
	$EFIPT qemu -o "$d/run" --start reset -- \
	-machine q35 -m 512 -smp 1 -accel tcg -cpu max -icount shift=3,sleep=off \
	-drive if=pflash,format=raw,unit=0,readonly=on,file="$CODE" \
	-drive if=pflash,format=raw,unit=1,file="$d/vars.fd" \
	-display none -nodefaults -no-reboot -net none -serial file:"$d/serial.txt" \
	-plugin "$LOGGER,out=$d/log.bin,head=$HEAD,count=$d/count.txt,limit=$LIMIT"
contains "reset: the boot reached the UEFI Shell" "$d/serial.txt" "UEFI Interactive Shell"
expect "reset: the trace begins at the reset vector, in 16-bit mode" python3 -c "
import json; t=json.load(open('$d/run/manifest.json'))['trace']
assert t['first_ip']=='0xfffffff0' and t['first_call']==0 and t['stopped_by']=='exit', t"

# the whole boot: no decode error, the logger's count
expect_rc "reset: efipt decode reads the whole boot" 0 $EFIPT decode "$d/run"
mv "$TMP/out" "$d/decode.txt"
contains "reset: no decode errors" "$d/decode.txt" "Errors        0"
# QEMU ends inside the logger's callback: where the last instruction that
# ran went is unknown, a branch there is left out of the trace (end_ip is
# then that branch)
expect "reset: decoded = executed instruction count (logger: $(cat "$d/count.txt" 2>/dev/null))" python3 -c "
import json, re
t = json.load(open('$d/run/manifest.json'))['trace']
dec = int(re.search(r'^Instructions +(\d+)', open('$d/decode.txt').read(), re.M).group(1))
w = open('$d/count.txt').read().split()
ran, last = int(w[3]), int(w[5], 16)
left_out = 1 if int(t['end_ip'], 16) == last else 0
assert dec == t['insns'] == ran - left_out and ran > 10**9, (dec, t['insns'], ran, left_out)"

# the first instructions, one by one, by efipt and by libipt
$EFIPT insn --run "$d/run" --no-inst 2>/dev/null | head -n "$WINDOW" >"$d/insn.txt"
if python3 tests/qemu/insnlog_cmp.py "$d/log.bin" "$d/insn.txt" "$d/run/manifest.json" 0 \
	--head >"$d/cmp.txt" 2>&1; then
	ok "reset: the first instructions from the reset vector are the executed ones ($(cat "$d/cmp.txt"))"
else
	nok "reset: the first instructions from the reset vector are the executed ones" \
		"$(head -c 400 "$d/cmp.txt")"
fi
set --
for f in $(python3 -c "import json
for r in json.load(open('$d/run/memmap.json'))['regions']: print('%s:%s' % (r['snapshot'], r['phys']))"); do
	set -- "$@" "$d/run/$f"
done
"$IPT" "$d/run/trace.pt" "$@" 2>"$d/ipt.err" | head -n "$(grep -vc '^\[' "$d/insn.txt")" >"$d/ipt.txt"
if [ -s "$d/ipt.txt" ] && grep -v '^\[' "$d/insn.txt" | cmp -s - "$d/ipt.txt"; then
	ok "reset: libipt decodes the same first instructions"
else
	nok "reset: libipt decodes the same first instructions" \
		"$(head -c 300 "$d/ipt.err"); $(wc -l <"$d/ipt.txt") vs $(grep -vc '^\[' "$d/insn.txt") lines"
fi
