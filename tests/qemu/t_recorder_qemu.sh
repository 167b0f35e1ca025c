# Real execution through ExitBootServices, in make test (make test-kernel
# goes on into Linux, about 5 minutes). efipt.efi trace --source qemu
# --recorder starts rectool.efi, which does what an OS loader does last
# (GetMemoryMap, ExitBootServices) and then resets the machine through a
# runtime service; efipt-qemu.so traces from efipt.efi's start marker to
# the reset, and insnlog.so records the same execution on its own. The
# decode must equal what ran, across the recorder's ExitBootServices
# handler and back into the loader after it.
. tests/lib.sh
. tests/qemu/lib_qemu.sh
. tests/qemu/lib_recorder.sh

plugin_output "recorder, efipt qemu"
d=$TMP/ebs
mkdir -p "$d"
sh ovmf/mkesp.sh --image "$d/esp.img" --add "$TOOL:rectool.efi" \
	--args 'trace --source qemu --recorder --debugcon -- \rectool.efi reset-seq ebs' >/dev/null
QEMU_EXTRA="-plugin $LOGGER,out=$d/log.bin,from=marker" \
	nice -n 10 sh ovmf/qemu_esp.sh "$EFIPT" "$d/esp.img" "$d" 300 --start marker --no-esp \
	>"$d/out" 2>"$d/err"
rc=$?
[ "$rc" -eq 0 ] && ok "recorder, efipt qemu: traced from the start marker to the reset" ||
	nok "recorder, efipt qemu: traced to the reset" "exit $rc: $(tail -c 400 "$d/err")"
L=$d/debugcon.log
contains "recorder, efipt qemu: armed" "$L" "efipt: recorder armed: generation 1"
contains "recorder, efipt qemu: the loader called ExitBootServices" "$L" \
	"rectool: ExitBootServices, then ResetSystem(EfiResetWarm)"
contains "recorder, efipt qemu: the recorder's handler ran, tracing went on" "$L" \
	"tracing goes on into the OS"
expect "recorder, efipt qemu: the trace ended at the reset (QEMU's exit)" python3 -c "
import json; t = json.load(open('$d/run/manifest.json'))['trace']
assert t['start'] == 'marker' and t['stopped_by'] == 'exit' and t['insns'] > 10**6, t"
expect_rc "recorder, efipt qemu: efipt insn --run decodes without errors" 0 \
	$EFIPT insn --run "$d/run" --no-inst
# decoded = executed (as tests/qemu/insnlog_cmp.py compares, streamed: 5e7
# instructions): consecutive repeats of one address are one instruction on
# both sides (a REP string instruction logs each iteration). At QEMU's exit
# the last logged instruction, the one that resets, is either the trace's
# end_ip and not decoded, or (where the plugin saw it start: Debian 13's
# QEMU 10.0.13) decoded, with end_ip the next instruction (1..15 bytes on)
grep -v '^\[' "$TMP/out" | uniq >"$d/dec.txt"
ndec=$(grep -vc '^\[' "$TMP/out")
rm -f "$TMP/out"
od -An -v -tx8 -w8 "$d/log.bin" | tr -d ' ' | uniq >"$d/log.txt"
set -- $(python3 -c "import json; t = json.load(open('$d/run/manifest.json'))['trace']
print(t['insns'], '%016x' % int(t['end_ip'], 16), t['first_ip'])")
insns=$1 end_ip=$2 first_ip=$3
last=$(tail -n 1 "$d/log.txt")
if [ "$ndec" = "$insns" ] && { { [ "$last" = "$end_ip" ] && head -n -1 "$d/log.txt" | cmp -s - "$d/dec.txt"; } ||
	{ [ $((0x$end_ip - 0x$last)) -ge 1 ] && [ $((0x$end_ip - 0x$last)) -le 15 ] && cmp -s "$d/log.txt" "$d/dec.txt"; }; }; then
	ok "recorder, efipt qemu: decoded = executed, marker ($first_ip) to reset: $insns instructions"
else
	nok "recorder, efipt qemu: decoded = executed" "decoded $ndec, manifest $insns, end_ip $end_ip, \
log ends $(tail -n 1 "$d/log.txt"); $(head -n -1 "$d/log.txt" | cmp - "$d/dec.txt" 2>&1)"
fi
# rectool's own code, in order: its last GetMemoryMap (LibMemoryMap), then
# two calls out of it: ExitBootServices, which returns (in it, mostly
# efipt.efi's recorder handler, around the start marker: it compares and
# takes again the code of every loaded image, millions of instructions),
# and ResetSystem, which does not
base=$(sed -n 's/^efipt: loaded \\rectool.efi at \(0x[0-9a-f]*\) (\([0-9]*\) bytes)$/\1 \2/p' "$L")
mm=$(nm build/tests/rectool.so | sed -n 's/^\([0-9a-f]*\) t LibMemoryMap$/0x\1/p')
expect "recorder, efipt qemu: the loader's code runs again after ExitBootServices returned" python3 -c "
import struct
base, size = [int(x, 0) for x in '$base'.split()]
pe = open('build/efipt.efi', 'rb').read()
efipt_size = struct.unpack_from('<I', pe, struct.unpack_from('<I', pe, 0x3c)[0] + 80)[0]
marker = int('$first_ip', 16)
# runs of [in rectool, instructions, of them near the marker], from the
# last entry into LibMemoryMap
runs = []
for line in open('$d/dec.txt'):
    a = int(line, 16)
    if a == base + $mm:
        runs = []
    now = base <= a < base + size
    if not runs or runs[-1][0] != now:
        runs.append([now, 0, 0])
    runs[-1][1] += 1
    runs[-1][2] += abs(a - marker) < efipt_size
# LibMemoryMap's own calls out (GetMemoryMap, AllocatePool) come first
assert [r[0] for r in runs[-3:]] == [False, True, False], runs
ebs = runs[-3]
assert ebs[1] > 10**6 and ebs[2] * 10 > ebs[1] * 9, ebs"
rm -f "$d/log.bin" "$d/log.txt" "$d/dec.txt"
