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
mv "$TMP/out" "$d/insn.txt"
fc=$(python3 -c "import json; print(json.load(open('$d/run/manifest.json'))['trace']['first_call'])")
# at QEMU's exit the last instruction (the one that resets) is the trace's
# end_ip, not decoded: the log is the decode and that one
if python3 tests/qemu/insnlog_cmp.py "$d/log.bin" "$d/insn.txt" "$d/run/manifest.json" "$fc" \
	>"$d/cmp.txt" 2>&1 && python3 -c "
import json, sys
sys.path.insert(0, 'tests/qemu')
from insnlog_cmp import collapse, read_log
t = json.load(open('$d/run/manifest.json'))['trace']
log = collapse(read_log('$d/log.bin'))
assert len(log) == len(collapse(int(l, 16) for l in open('$d/insn.txt') if not l.startswith('['))) + 1 \
	and log[-1] == int(t['end_ip'], 16), (len(log), hex(log[-1]), t['end_ip'])" >>"$d/cmp.txt" 2>&1; then
	ok "recorder, efipt qemu: decoded = executed, marker to reset ($(head -n 1 "$d/cmp.txt"))"
else
	nok "recorder, efipt qemu: decoded = executed" "$(head -c 400 "$d/cmp.txt")"
fi
# rectool's own code, in order: its last GetMemoryMap (LibMemoryMap), then
# two calls out of it: ExitBootServices, which returns (in it, mostly
# efipt.efi's recorder handler, around the start marker: it compares and
# takes again the code of every loaded image, millions of instructions),
# and ResetSystem, which does not
base=$(sed -n 's/^efipt: loaded \\rectool.efi at \(0x[0-9a-f]*\) (\([0-9]*\) bytes)$/\1 \2/p' "$L")
mm=$(nm build/tests/rectool.so | sed -n 's/^\([0-9a-f]*\) t LibMemoryMap$/0x\1/p')
expect "recorder, efipt qemu: the loader's code runs again after ExitBootServices returned" python3 -c "
import json, struct
base, size = [int(x, 0) for x in '$base'.split()]
pe = open('build/efipt.efi', 'rb').read()
efipt_size = struct.unpack_from('<I', pe, struct.unpack_from('<I', pe, 0x3c)[0] + 80)[0]
marker = int(json.load(open('$d/run/manifest.json'))['trace']['first_ip'], 16)
ins = [int(l, 16) for l in open('$d/insn.txt') if not l.startswith('[')]
last = max(i for i, a in enumerate(ins) if a == base + $mm)
runs = []
for a in ins[last:]:
    now = base <= a < base + size
    if not runs or runs[-1][0] != now:
        runs.append([now, 0])
    runs[-1][1] += 1
# LibMemoryMap's own calls out (GetMemoryMap, AllocatePool) come first
assert [r[0] for r in runs[-3:]] == [False, True, False] and runs[-3][1] > 10**6, runs
n = sum(r[1] for r in runs)
ebs = ins[len(ins) - n + sum(r[1] for r in runs[:-3]):][:runs[-3][1]]
near = sum(1 for a in ebs if abs(a - marker) < efipt_size)
assert near * 10 > len(ebs) * 9, (near, len(ebs))"
