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
# shellcheck disable=SC2046
expect_rc "reset: efipt qemu traces the boot from the reset vector" 0 nice -n 10 timeout 300 \
	$EFIPT qemu -o "$d/run" --start reset -- $(ovmf_args "$d") -icount shift=3,sleep=off \
	-serial file:"$d/serial.txt" -plugin "$LOGGER,out=$d/log.bin,head=$HEAD,count=$d/count.txt,limit=$LIMIT"
contains "reset: the boot reached the UEFI Shell" "$d/serial.txt" "UEFI Interactive Shell"
expect "reset: the trace begins at the reset vector, in 16-bit mode" python3 -c "
import json; t=json.load(open('$d/run/manifest.json'))['trace']
assert t['first_ip']=='0xfffffff0' and t['first_call']==0 and t['stopped_by']=='exit', t"

# the whole boot: no decode error, the logger's count
expect_rc "reset: efipt decode reads the whole boot" 0 $EFIPT decode "$d/run"
mv "$TMP/out" "$d/decode.txt"
contains "reset: no decode errors" "$d/decode.txt" "Errors        0"
# the modules that run where the firmware loaded them (DXE drivers, PEI's
# copies in memory) found by their code in the snapshots: nearly every
# instruction of the boot is some module's
expect "reset: DXE drivers and PEI's copies in memory named by their code" python3 -c "
import json, re
im = json.load(open('$d/run/images.json'))['images']
loaded = [i['name'] for i in im if i['code_type'] == 'FirmwareVolumeLoaded']
assert {'DxeCore', 'BdsDxe', 'CpuDxe', 'PeiCore', 'DxeIpl'} <= set(loaded), sorted(loaded)
assert json.load(open('$d/run/manifest.json'))['firmware_volumes']['found'] == len(loaded)
out = re.search(r'(\d+)\s+([\d.]+)%  \(outside every listed image\)', open('$d/decode.txt').read())
assert out is None or float(out.group(2)) < 1.0, out.group(0)"
expect_rc "reset: efipt info" 0 $EFIPT info "$d/run"
expect "reset: efipt info says how the modules were named" python3 -c "
import re, json
m = re.search(r'^Modules +(\d+) in the firmware volumes: \d+ images renamed, (\d+) SEC/PEI added in place, (\d+) found loaded in memory by their code$', open('$TMP/out').read(), re.M)
fv = json.load(open('$d/run/manifest.json'))['firmware_volumes']
assert m and [int(x) for x in m.groups()] == [fv['modules'], fv['added'], fv['found']], (m, fv)"
count_equals_log reset "$d" '10**9'

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

# With registers (plugin API 2, QEMU 9.0 on): the same boot with the code
# sizes inferred as with QEMU 7.2 (regs=off) writes the same MODE.Exec
# sequence (outside PSB+); PIPs where CR3 was written, which both efipt and
# libipt decode through
if python3 -c "import json,sys; sys.exit(0 if json.load(open('$d/run/manifest.json'))['trace']['registers'] else 1)"; then
	d2=$TMP/noregs
	# shellcheck disable=SC2046
	qemu_run "$d2" 300 $(ovmf_args "$d2") -icount shift=3,sleep=off \
		-plugin "$PLUGIN,dir=$d2/run,start=reset,regs=off" -plugin "$LOGGER,out=/dev/null,limit=$LIMIT"
	expect "regs: the same boot without registers traced" test -f "$d2/run/manifest.json"
	for r in "$d" "$d2"; do
		$EFIPT packets --format jsonl "$r/run/trace.pt" 2>/dev/null |
			grep -E '"type":"(psb|psbend|mode.exec|pip)"' >"$r/modes.jsonl"
	done
	expect "regs: MODE.Exec sequence equal to the inference's (registers bound the sizes)" python3 -c "
import json
def seq(f):
    out, pips, psb = [], 0, False
    for l in open(f):
        p = json.loads(l)
        if p['type'] in ('psb', 'psbend'):
            psb = p['type'] == 'psb'
        elif p['type'] == 'mode.exec' and not psb:
            out.append((p['csl'], p['csd']))
        elif p['type'] == 'pip' and not psb:
            pips += 1
    return out, pips
a, pa = seq('$d/modes.jsonl')
b, pb = seq('$d2/modes.jsonl')
t = json.load(open('$d/run/manifest.json'))['trace']
assert a == b and len(a) >= 2, (a, b)
assert pa == t['pips'] > 0 and pb == 0, (pa, pb, t['pips'])"
	# libipt and efipt over the trace from the PSB before the first PIP (CR3
	# written) to one 8 KiB after it: both sync at its PSB
	win=$(python3 -c "
import json
psbs, pip = [], None
for l in open('$d/modes.jsonl'):
    p = json.loads(l)
    if p['type'] == 'psb':
        psbs.append(p['off'])
    elif p['type'] == 'pip' and pip is None and psbs and p['off'] > psbs[-1] + 16:
        pip = p['off']
if pip is not None:
    lo = max(o for o in psbs if o < pip)
    hi = [o for o in psbs if o > pip + 8192]
    print(lo, hi[0] if hi else '')")
	set -- $win
	lo=${1:-} hi=${2:-}
	if [ -n "$lo" ] && [ -n "$hi" ]; then
		dd if="$d/run/trace.pt" of="$d/win.pt" bs=1 skip="$lo" count=$((hi - lo)) 2>/dev/null
		raws="" ipts=""
		for f in $(python3 -c "import json
for r in json.load(open('$d/run/memmap.json'))['regions']: print('%s:%s' % (r['snapshot'], r['phys']))"); do
			raws="$raws --raw $d/run/$f"
			ipts="$ipts $d/run/$f"
		done
		# shellcheck disable=SC2086
		$EFIPT insn --pt "$d/win.pt" $raws --no-inst 2>/dev/null | grep -v '^\[' >"$d/win.txt"
		# shellcheck disable=SC2086
		"$IPT" "$d/win.pt" $ipts >"$d/ipt-win.txt" 2>/dev/null
		# at the slice's end libipt walks on to the next branch it needs a
		# packet for, efipt stops after the last packet: the same up to there
		if [ "$(wc -l <"$d/win.txt")" -gt 1000 ] &&
			head -n "$(wc -l <"$d/win.txt")" "$d/ipt-win.txt" | cmp -s - "$d/win.txt"; then
			ok "regs: libipt decodes the same instructions around the first PIP ($(wc -l <"$d/win.txt") from trace offset $lo)"
		else
			nok "regs: libipt decodes the same instructions around the first PIP" \
				"$(wc -l <"$d/win.txt") vs $(wc -l <"$d/ipt-win.txt") lines, trace $lo-$hi"
		fi
	else
		nok "regs: libipt decodes the same instructions around the first PIP" "no PIP outside PSB+"
	fi
else
	ok "regs: SKIP, this QEMU's plugin API has no registers (QEMU 9.0 on)"
fi
