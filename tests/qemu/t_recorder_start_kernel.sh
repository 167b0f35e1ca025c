# Real execution through ExitBootServices into Linux (make test; alone:
# make test-kernel),
# without PT hardware. efipt.efi trace --source qemu --recorder starts
# Debian's kernel (its EFI stub); efipt-qemu.so traces from efipt.efi's
# start marker through the stub (which decompresses the kernel: about
# 4.8e9 instructions), ExitBootServices (where the recorder takes the
# images again) and the kernel's start-up, to the first instruction of
# start_kernel. The trace must decode with zero errors to exactly the
# traced instruction count, and the kernel's functions must be named from
# its symbols (/proc/kallsyms of the same kernel, which
# tests/qemu/t_recorder_linux.sh keeps; nokaslr, and the slide found from
# the trace must be 0). About 5 minutes on an idle 2-core machine; named
# to run after t_recorder_linux.sh, which keeps the kallsyms it needs.
#
# QEMU's -cpu max has LA57; the stub then switches paging through a 32-bit
# trampoline, where efipt-qemu.so writes two MODE.Exec packets without the
# TIP of the far transfer between them and the decode loses the last
# instructions (a plugin defect, reported); la57=off avoids that switch.
. tests/lib.sh
. tests/qemu/lib_qemu.sh

plugin_output "kernel"
KDIR=build/kernel
if [ ! -f "$KDIR/version" ]; then
	ok "kernel: SKIP, no Debian kernel in $KDIR (sh tests/qemu/get-kernel.sh $KDIR needs apt)"
	exit 0
fi
K=$KDIR/$(cat "$KDIR/version")
if [ ! -f "$K/kallsyms" ]; then
	echo "kernel: no $K/kallsyms yet: running tests/qemu/t_recorder_linux.sh first" >&2
	sh tests/qemu/t_recorder_linux.sh
fi
if [ ! -f "$K/kallsyms" ]; then
	nok "kernel: the kernel's symbols" "$K/kallsyms missing (t_recorder_linux.sh keeps it)"
	exit 1
fi
start=$(sed -n 's/^\([0-9a-f]*\) T start_kernel$/0x\1/p' "$K/kallsyms")
d=$TMP/kernel
mkdir -p "$d"
sh ovmf/mkesp.sh --image "$d/esp.img" --size 64 --add "$K/vmlinuz:vmlinuz" --args \
	'trace --source qemu --recorder --no-snapshot --debugcon -- \vmlinuz console=ttyS0 nokaslr' \
	>/dev/null
t0=$(date +%s)
QEMU_EXTRA="-cpu max,la57=off" sh ovmf/qemu_esp.sh "$EFIPT" "$d/esp.img" "$d" 900 \
	--start marker --stop "$start" >"$d/qemu.txt" 2>&1
rc=$?
[ "$rc" -eq 0 ] && ok "kernel: efipt qemu traced to start_kernel ($start) in $(($(date +%s) - t0)) s" ||
	nok "kernel: efipt qemu traced to start_kernel" "exit $rc: $(tail -c 400 "$d/qemu.txt")"
L=$d/debugcon.log
contains "kernel: efipt.efi armed the recorder and started the kernel" "$L" "recorder armed: generation"
contains "kernel: ExitBootServices came inside the trace (the recorder's handler)" "$L" \
	"efipt: ExitBootServices: recorder:"
expect "kernel: the trace stopped at start_kernel, from the start marker" python3 -c "
import json; t = json.load(open('$d/run/manifest.json'))['trace']
assert t['start'] == 'marker' and t['stopped_by'] == 'stop' and t['end_ip'] == '$start', t"
expect_rc "kernel: efipt decode reads the whole trace" 0 $EFIPT decode "$d/run"
cp "$TMP/out" "$d/decode.txt"
contains "kernel: no decode errors" "$d/decode.txt" "Errors        0"
expect "kernel: decoded = traced instruction count" python3 -c "
import json, re
t = json.load(open('$d/run/manifest.json'))['trace']
n = int(re.search(r'^Instructions +(\d+)', open('$d/decode.txt').read(), re.M).group(1))
assert n == t['insns'] and n > 10**9, (n, t['insns'])"
expect_rc "kernel: efipt top with the kernel's symbols, slide found" 0 $EFIPT top "$d/run" \
	--kernel-symbols "$K/kallsyms:auto" --format csv
cp "$TMP/out" "$d/top.csv"
contains "kernel: the KASLR slide found is 0 (nokaslr)" "$TMP/err" "KASLR slide 0x0:"
expect "kernel: kernel functions named from its symbols" python3 -c "
import csv
rows = [r for r in csv.reader(open('$d/top.csv')) if r and r[0] == 'vmlinux']
names = {r[1] for r in rows}
assert 'x86_64_start_kernel' in names and 'copy_bootdata' in names and len(rows) >= 10, sorted(names)"
expect_rc "kernel: efipt calls names the path into start_kernel" 0 $EFIPT calls "$d/run" \
	--kernel-symbols "$K/kallsyms" --function x86_64_start_kernel --depth 2
contains "kernel: x86_64_start_kernel calls clear_bss" "$TMP/out" \
	'vmlinux`clear_bss'
