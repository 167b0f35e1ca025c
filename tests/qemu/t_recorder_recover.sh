# efipt.efi recover under QEMU+OVMF (SYNTHETIC source), from the UEFI
# Shell's startup.nsh over three boots of one QEMU (tests/qemu/rectool.c
# does the resets and the damage):
#   boot 1  trace --recorder over rectool, which resets through port 0CF9H
#           (a trace that never went round its ring)
#   boot 2  recover onto a full ESP (fails, says so, removes what it wrote,
#           keeps the region reserved for another try); every kind of bad input, each refused
#           with its reason: a damaged header, a stale generation, a variable
#           naming memory beyond RAM or memory this boot's firmware uses, a
#           damaged layout; recover again with room (the exact end from the
#           zero fill; the synthetic truth); then trace --recorder over an
#           image that returns, and a warm reset (reset -w)
#   boot 3  recover: the end efipt recorded when the image returned, the
#           same bytes as that run's trace.pt; a second recorder armed while
#           one runs is refused; garbage where the header was (RAM after a
#           power cycle) is no recorder
. tests/lib.sh
. tests/qemu/lib_qemu.sh
. tests/qemu/lib_recorder.sh

RING=16384
INSNS=50000
d=$TMP/shell
mkdir -p "$d"
T="trace --recorder --source synthetic --size 16K --insns $INSNS --no-snapshot"
R='fs0:\efipt.efi --debugcon recover'
cat >"$d/startup.nsh" <<EOF
@echo -off
fs0:
if not exist fs0:\\step2 then
  echo 1 > fs0:\\step2
  fs0:\\efipt.efi --debugcon $T -- \\rectool.efi reset-seq cf9
endif
if not exist fs0:\\step3 then
  echo 1 > fs0:\\step3
  $R
  rm fs0:\\filler.bin
  fs0:\\rectool.efi save
  fs0:\\rectool.efi header-crc
  $R
  fs0:\\rectool.efi header-crc
  fs0:\\rectool.efi stale
  $R
  fs0:\\rectool.efi restore
  fs0:\\rectool.efi outside
  $R
  fs0:\\rectool.efi restore
  fs0:\\rectool.efi firmware
  $R
  fs0:\\rectool.efi restore
  fs0:\\rectool.efi trace-crc
  $R
  fs0:\\rectool.efi trace-crc
  $R
  fs0:\\efipt.efi --debugcon $T -- \\rectool.efi reset-seq
  reset -w
endif
$R
fs0:\\efipt.efi --debugcon $T -- \\efipt.efi --debugcon $T -- \\rectool.efi reset-seq
fs0:\\rectool.efi cold
$R
reset -s
EOF
sh ovmf/mkesp.sh --image "$d/esp.img" --no-fallback --add "$TOOL:rectool.efi" \
	--add "$d/startup.nsh:startup.nsh" >/dev/null
# all but 2 MiB of the ESP taken: the first recover cannot write its code
export MTOOLS_SKIP_CHECK=1
free=$(mdir -i "$d/esp.img" ::/ | sed -n 's/ bytes free//p' | tr -d ' ')
truncate -s $((free - 2 * 1048576)) "$d/filler.bin"
mcopy -i "$d/esp.img" "$d/filler.bin" ::/filler.bin
rm -f "$d/filler.bin"
QEMU_REBOOT=1 BOOT_TIMEOUT=300 boot_esp shell
L=$d/debugcon.log

# in_order NAME TEXT...: each TEXT found in the log after the one before
in_order() {
	io_name=$1
	shift
	if python3 - "$L" "$@" >"$TMP/order" 2>&1 <<'EOF'
import sys
t, at = open(sys.argv[1]).read(), 0
for s in sys.argv[2:]:
    i = t.find(s, at)
    if i < 0:
        sys.exit("not found after offset %d: %s" % (at, s))
    at = i + len(s)
EOF
	then ok "$io_name"; else nok "$io_name" "$(cat "$TMP/order")"; fi
}

in_order "boot 1: armed, reset through port 0xcf9" \
	"recorder armed: generation 1," "rectool: out 0xcf9, 0x06"
in_order "boot 2: recover onto a full ESP fails, says why, keeps the recorder" \
	"efipt.efi 0.1.0: recover" "writing the run directory failed: EFI_VOLUME_FULL (its" \
	"files were removed; the recorder stays armed)" "efipt: exit EFI_VOLUME_FULL"
in_order "boot 2: the region stays reserved after the failed write" \
	"exit EFI_VOLUME_FULL" "rectool: variable saved" "rectool: header byte flipped"
in_order "boot 2: with room the same trace is recovered (never marked recovered before)" \
	"rectool: layout byte flipped" "efipt.efi 0.1.0: recover" \
	"bytes of trace of boot 1 (end: unwrapped)" "efipt: exit EFI_SUCCESS"
expect "boot 2: the failed recover did not mark the recorder recovered" python3 -c "
t = open('$L').read()
a = t.index('exit EFI_VOLUME_FULL'); b = t.index('of boot 1 (end: unwrapped)')
assert 'recovered before' not in t[a:b]"
in_order "bad input: a damaged header is refused (EFI_CRC_ERROR)" \
	"rectool: header byte flipped" "no trace recovered: the recorder header at" "is damaged (CRC-32" \
	"efipt: exit EFI_CRC_ERROR"
in_order "bad input: a stale generation is refused (EFI_NOT_FOUND)" \
	"rectool: variable changed" "is generation 1, the variable names generation 2: it is an older arming's (stale)" \
	"efipt: exit EFI_NOT_FOUND"
in_order "bad input: a variable naming memory beyond RAM: nothing read (EFI_NOT_FOUND)" \
	"rectool: variable changed, region 0x00000fff00000000" "is not all RAM in this boot's memory map: not read" \
	"efipt: exit EFI_NOT_FOUND"
in_order "bad input: a region this boot's firmware uses: nothing read (EFI_ACCESS_DENIED)" \
	"rectool: variable changed, region" "is in use by this boot's firmware (" "is BootServicesData): its trace is overwritten, not read" \
	"efipt: exit EFI_ACCESS_DENIED"
in_order "bad input: a damaged layout section is refused (EFI_CRC_ERROR)" \
	"rectool: layout byte flipped" "no trace recovered: the layout section is damaged" \
	"efipt: exit EFI_CRC_ERROR"
in_order "boot 2: arm again over an image that returns" \
	"recorder armed: generation 2," "rectool: sequence done, returning" "\\rectool.efi returned EFI_SUCCESS"
in_order "boot 3: the recorder is found and recovered: the end efipt recorded at return" \
	"a flight recorder trace from an earlier boot is in memory" \
	"bytes of trace of boot 2 (end: stopped)" "efipt: exit EFI_SUCCESS"
in_order "boot 3: a second recorder while one is tracing is refused" \
	"recorder armed: generation 3," "is still tracing: one recorder at a time" \
	"efipt: exit EFI_ALREADY_STARTED"
in_order "bad input: garbage where the header was (RAM after a power cycle) is no recorder" \
	"rectool: header page filled with garbage" "no trace recovered: no recorder header at" \
	"(the memory was not kept: a cold boot, a power cycle or a memory test clears it" \
	"efipt: exit EFI_NOT_FOUND"

# the run directories: the full-ESP one says it failed; the two good ones
set -- $(recovered_dirs shell)
fails=0 goods=""
for r in "$@"; do
	res=$(python3 -c "import json; print(json.load(open('$r/manifest.json'))['status']['result'])" 2>/dev/null)
	case "$res" in
	ok) goods="$goods $r" ;;
	*) fails=$((fails + 1)) ;;
	esac
done
expect "the recover onto the full ESP left only a manifest that says it failed" python3 -c "
import glob, json, os
runs = [(os.path.dirname(m), json.load(open(m))) for m in glob.glob('$d/efipt/*/manifest.json')]
full = [(p, m) for p, m in runs if m['command'] == 'recover' and 'EFI_VOLUME_FULL' in m['status']['message']]
assert len(full) == 1 and full[0][1]['status']['result'] == 'failed'
p, m = full[0]
assert os.listdir(p) == ['manifest.json'], os.listdir(p)
assert all(f['status'] in ('EFI_ABORTED', 'EFI_VOLUME_FULL') for f in m['files'])"
set -- $goods
if [ $# -ne 2 ]; then
	nok "two recovered run directories" "$# good ones of $(recovered_dirs shell | tr '\n' ' ')"
	exit 0
fi
R1=$1 R2=$2
POS=$(sed -n 's/.*write position \(0x[0-9a-f]*\)$/\1/p' "$L" | head -n 1)
expect_rc "boot 1's trace: efipt info accepts it" 0 $EFIPT info "$R1"
expect "boot 1's trace: manifest: from boot 1 in boot 2, end unwrapped" python3 -c "
import json; r = json.load(open('$R1/manifest.json'))['recovered']
assert r['from_boot'] == 1 and r['this_boot'] == 2 and r['end'] == 'unwrapped', r"
check_truth "$R1" "boot 1's trace"
expect "boot 1's trace: every walked instruction decoded" sh -c \
	"$EFIPT decode '$R1' | grep -q \"^Instructions  \$(sed -n 's/.*SYNTHETIC trace (no Intel PT): \([0-9]*\) instructions.*/\1/p' '$L' | head -n 1)\$\""
expect_rc "boot 2's trace: efipt info accepts it" 0 $EFIPT info "$R2"
# the trace run of boot 2 (its image returned): the same bytes
T2=$(for r in $(rundirs shell); do [ -f "$r/manifest.json" ] && python3 -c "
import json, sys; m = json.load(open('$r/manifest.json'))
sys.exit(0 if m['command'] == 'trace' and m.get('recorder', {}).get('generation') == 2 else 1)" && echo "$r"; done)
if [ -n "$T2" ] && cmp -s "$T2/trace.pt" "$R2/trace.pt"; then
	ok "arm, return, reboot, recover: the recovered trace.pt is the returned run's ($(stat -c %s "$R2/trace.pt") bytes)"
else
	nok "arm, return, reboot, recover: the recovered trace.pt is the returned run's" \
		"run '$T2', $(cmp "$T2/trace.pt" "$R2/trace.pt" 2>&1)"
fi
expect "boot 2's trace: manifest: from boot 2 in boot 3, end stopped, the image returned" python3 -c "
import json; r = json.load(open('$R2/manifest.json'))['recovered']
assert r['from_boot'] == 2 and r['this_boot'] == 3 and r['end'] == 'stopped' and r['returned'], r"
check_truth "$R2" "boot 2's trace"
