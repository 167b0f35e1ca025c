# efipt-qemu.so (qemu-plugin/, docs/qemu.md): the Intel PT it writes for an
# OVMF boot under QEMU must decode, with efipt and with libipt, to exactly
# the instructions QEMU executed, as recorded by a second, independent
# plugin (tests/qemu/insnlog.c) in the same QEMU process.
. tests/lib.sh
. tests/qemu/lib_qemu.sh

plugin_output "qemu plugin"

# trace NAME SKIP LOGLIMIT PLUGIN-OPTIONS: boot OVMF (no disk) with both
# plugins; the logger records from execution SKIP on and ends QEMU at
# LOGLIMIT. Leaves $TMP/NAME/run (run directory), log.bin, insn.txt.
trace() {
	t=$1 skip=$2 limit=$3 opts=$4
	d=$TMP/$t
	# shellcheck disable=SC2046
	qemu_run "$d" 120 $(ovmf_args "$d") -plugin "$PLUGIN,dir=$d/run,$opts" \
		-plugin "$LOGGER,out=$d/log.bin,skip=$skip,limit=$limit"
	rc=$?
	if [ "$rc" -eq 0 ] && [ -f "$d/run/manifest.json" ]; then
		ok "$t: QEMU ran both plugins and the run directory is complete"
	else
		nok "$t: QEMU ran both plugins and the run directory is complete" \
			"QEMU exit $rc: $(head -c 400 "$d/qemu.log")"
	fi
	expect_rc "$t: efipt insn --run decodes without errors" 0 \
		$EFIPT insn --run "$d/run" --no-inst
	mv "$TMP/out" "$d/insn.txt"
	if python3 tests/qemu/insnlog_cmp.py "$d/log.bin" "$d/insn.txt" "$d/run/manifest.json" \
		"$skip" >"$d/cmp.txt" 2>&1; then
		ok "$t: decoded = executed ($(cat "$d/cmp.txt"))"
	else
		nok "$t: decoded = executed" "$(head -c 400 "$d/cmp.txt")"
	fi
	libipt_agrees "$t" "$d"
	expect "$t: no temporary files left" sh -c "! ls '$d/run' | grep -q tmp"
}

# SEC and PEI: 32-bit code from the first protected-mode instruction on
trace pei 0 2100000 start=protected,limit=2000000
expect "pei: 2000000 instructions traced, stopped by the limit" python3 -c "
import json; t=json.load(open('$TMP/pei/run/manifest.json'))['trace']
assert t['insns']==2000000 and t['stopped_by']=='limit' and t['source']=='qemu', t"
expect_rc "pei: efipt info reads the run directory" 0 $EFIPT info "$TMP/pei/run"
contains "pei: info names the trace source" "$TMP/out" "Trace        qemu"
# the comparison finds a difference when there is one
expect "pei: a missing instruction is found" sh -c "! python3 tests/qemu/insnlog_cmp.py \
	'$TMP/pei/log.bin' '$TMP/pei/insn.txt' '$TMP/pei/run/manifest.json' 0 --drop 1000"
expect "pei: a trace cut short is found" sh -c "head -n 1000 '$TMP/pei/insn.txt' >'$TMP/short.txt' &&
	! python3 tests/qemu/insnlog_cmp.py '$TMP/pei/log.bin' '$TMP/short.txt' '$TMP/pei/run/manifest.json' 0"

# no RET compression (QEMU passes a bare "noretcomp" as retcomp=off), a PSB+ every 256 bytes, deeper into PEI
trace nocomp 19000000 21500000 after=20000000,limit=1000000,noretcomp,psb=256
expect "nocomp: DisRETC in the manifest, PSBs written" python3 -c "
import json; t=json.load(open('$TMP/nocomp/run/manifest.json'))['trace']
assert int(t['rtit_ctl'],16) & (1<<11) and t['psb']==256, t"
$EFIPT packets "$TMP/nocomp/run/trace.pt" >"$TMP/nocomp/packets.txt" 2>&1
expect "nocomp: a PSB every 256 bytes or so" python3 -c "
import json; n=sum(1 for l in open('$TMP/nocomp/packets.txt') if ' psb' in l and 'psbend' not in l)
size=json.load(open('$TMP/nocomp/run/manifest.json'))['trace']['bytes']
assert n >= size // 300, (n, size)"

# DXE: 64-bit code and the timer interrupts there (FUP+TIP), in a window
# past the firmware's first interrupt (dxe_after)
d=$TMP/dxe-probe
if dxe_after "$d"; then
	ok "dxe: the firmware's first interrupt found by a first run (window after $DXE)"
	trace dxe $((DXE - 1000000)) $((DXE + 15000000)) after=$DXE,limit=5000000
	expect "dxe: 5000000 instructions with interrupts among them" python3 -c "
import json; t=json.load(open('$TMP/dxe/run/manifest.json'))['trace']
assert t['insns']==5000000 and t['events'] > 0, t"
	$EFIPT packets "$TMP/dxe/run/trace.pt" 2>&1 | head -n 20 >"$TMP/dxe/packets.txt"
	contains "dxe: MODE.Exec says 64-bit" "$TMP/dxe/packets.txt" "mode.exec cs.l"
else
	nok "dxe: the firmware's first interrupt found by a first run" "$(tail -c 300 "$d/qemu.log")"
fi

# efipt qemu: the same through the host CLI
QARGS=$(machine_args)
OVMF=$(ovmf_args "$TMP/cli-fw")
# shellcheck disable=SC2086
expect_rc "efipt qemu: traces 300000 instructions and ends QEMU" 0 nice -n 10 timeout 120 \
	$EFIPT qemu -o "$TMP/cli" --start protected --limit 300000 --noretcomp --psb 2048 -- $OVMF
contains "efipt qemu: says what it wrote" "$TMP/out" "300000 instructions traced"
expect_rc "efipt qemu: decode reads the run directory" 0 $EFIPT decode "$TMP/cli"
contains "efipt qemu: decoded 300000 instructions, no errors" "$TMP/out" "Instructions  300000"
expect "efipt qemu: manifest has the QEMU command, exit status and options" python3 -c "
import json; m=json.load(open('$TMP/cli/manifest.json')); t=m['trace']
assert t['source']=='qemu' and t['emulated'] is True and t['qemu_exit_status']==0, t
assert t['qemu_command'][0]=='qemu-system-x86_64' and '-plugin' in t['qemu_command'], t
assert int(t['rtit_ctl'],16) & (1<<11) and t['psb']==2048, t
assert m['command_line'].startswith('qemu -o '), m['command_line']"
# shellcheck disable=SC2086
expect_rc "efipt qemu: refuses QEMU arguments without firmware" 2 $EFIPT qemu -o "$TMP/nofw" -- $QARGS
contains "efipt qemu: says how to give the firmware" "$TMP/err" "the QEMU arguments give no firmware: add OVMF with -drive if=pflash"
[ ! -e "$TMP/nofw" ] && ok "efipt qemu: no run directory without firmware" || nok "efipt qemu: no run directory without firmware" "$TMP/nofw exists"
# shellcheck disable=SC2086
expect_rc "efipt qemu: refuses an existing run directory" 2 $EFIPT qemu -o "$TMP/cli" -- $OVMF
contains "efipt qemu: names it" "$TMP/err" "already exists: give a new run directory"
# shellcheck disable=SC2086
expect_rc "efipt qemu: QEMU failing to start" 1 $EFIPT qemu -o "$TMP/badq" -- $OVMF -bogus-option
contains "efipt qemu: says tracing never began" "$TMP/err" "before tracing began; no run directory"
[ ! -e "$TMP/badq" ] && ok "efipt qemu: no run directory when QEMU fails" || nok "efipt qemu: no run directory when QEMU fails" "$TMP/badq exists"
# shellcheck disable=SC2086
expect_rc "efipt qemu: a missing plugin is named" 2 $EFIPT qemu --plugin "$TMP/none.so" -o "$TMP/np" -- $OVMF
contains "efipt qemu: says how to build it" "$TMP/err" "make qemu-plugin"
# a start condition never met (the logger ends QEMU after 1M instructions)
# shellcheck disable=SC2086
expect_rc "efipt qemu: a start address never reached fails" 1 nice -n 10 timeout 120 \
	$EFIPT qemu -o "$TMP/never" --start 0x1 -- $OVMF -plugin "$LOGGER,out=/dev/null,limit=1000000"
contains "efipt qemu: says tracing never started" "$TMP/err" "tracing never started: start=0x1 was not reached in "
expect "efipt qemu: the manifest says failed" python3 -c "
import json; m=json.load(open('$TMP/never/manifest.json'))
assert m['status']['result']=='failed' and m['trace']['insns']==0, m['status']"

# efipt qemu --start marker --stop marker: a UEFI app with the markers around
# its work, booted from an ESP; the logger (passed through to QEMU) starts
# at the start marker by itself; exit=on ends QEMU at the stop marker
marker_app_trace markers "$TMP/mark" build/tests/marker_app.efi
expect_rc "markers: efipt insn --run decodes without errors" 0 $EFIPT insn --run "$TMP/mark/run" --no-inst
mv "$TMP/out" "$TMP/mark/insn.txt"
fc=$(python3 -c "import json; print(json.load(open('$TMP/mark/run/manifest.json'))['trace']['first_call'])")
if python3 tests/qemu/insnlog_cmp.py "$TMP/mark/log.bin" "$TMP/mark/insn.txt" \
	"$TMP/mark/run/manifest.json" "$fc" --whole >"$TMP/mark/cmp.txt" 2>&1; then
	ok "markers: decoded = executed, start marker to stop marker ($(cat "$TMP/mark/cmp.txt"))"
else
	nok "markers: decoded = executed, start marker to stop marker" "$(head -c 400 "$TMP/mark/cmp.txt")"
fi
expect "markers: the trace begins at the start marker, the app's code decodes" python3 -c "
import json; m=json.load(open('$TMP/mark/run/manifest.json')); t=m['trace']
assert t['stopped_by']=='stop' and t['insns'] > 50000, t
lines=[l.split() for l in open('$TMP/mark/insn.txt') if not l.startswith('[')]
assert int(lines[0][0],16)==int(t['first_ip'],16), lines[0]"
$EFIPT insn --run "$TMP/mark/run" 2>&1 | head -n 3 >"$TMP/mark/head.txt"
contains "markers: the first instruction is the start marker" "$TMP/mark/head.txt" "nop [rax+rax*1+0x31545045], eax"

# the app's DEBUG lines (REP OUTSB and OUT DX,AL to port 0x402): with
# registers and guest memory (plugin API 4) each byte of -debugcon's own log
# at the instruction that wrote it; else the manifest says why there is none
if python3 -c "import json,sys; sys.exit(0 if json.load(open('$TMP/mark/run/manifest.json'))['trace']['debug_port']['recorded'] else 1)"; then
	expect "debug port: debugport.jsonl holds -debugcon's bytes, in order" python3 -c "
import json
b = ''.join(json.loads(l)['bytes'] for l in open('$TMP/mark/run/debugport.jsonl')).encode('latin-1')
d = open('$TMP/mark/debugcon.log', 'rb').read()
assert b == d and d.count(b'\n') == 5, (b, d)"
	expect_rc "debug port: efipt log prints the lines" 0 $EFIPT log "$TMP/mark/run"
	cp "$TMP/out" "$TMP/mark/log.txt"
	expect "debug port: efipt log's lines are -debugcon's" python3 -c "
got = [l.split(None, 3)[3] for l in open('$TMP/out').read().splitlines()]
want = open('$TMP/mark/debugcon.log').read().splitlines()
assert got == want, (got, want)"
	# each record at its instruction: the decoded instruction with that index
	# is at the record's IP
	grep -v '^\[' "$TMP/mark/insn.txt" >"$TMP/mark/insn-only.txt"
	expect "debug port: every record at the OUT or OUTS that wrote it" python3 -c "
import json
ips = [int(l.split()[0], 16) for l in open('$TMP/mark/insn-only.txt')]
recs = [json.loads(l) for l in open('$TMP/mark/run/debugport.jsonl')]
assert len(recs) >= 10
for r in recs:
    assert ips[r['insn']] == int(r['ip'], 16), (r, hex(ips[r['insn']]))"
	expect_rc "debug port: efipt calls shows the lines in its call trace" 0 $EFIPT calls "$TMP/mark/run"
	expect "debug port: efipt calls: -debugcon's lines, in order, each at its index" python3 -c "
import re
got = [(int(m.group(1)), m.group(2)) for m in
       (re.match(r' *([0-9]+)  +# (.*)$', l) for l in open('$TMP/out').read().splitlines()) if m]
want = open('$TMP/mark/debugcon.log').read().splitlines()
assert [t for _, t in got] == want, (got, want)
logged = [int(l.split()[1]) for l in open('$TMP/mark/log.txt')]
assert [i for i, _ in got] == logged, (got, logged)"
	expect_rc "debug port: efipt log --cpu 1: none from that CPU" 1 $EFIPT log "$TMP/mark/run" --cpu 1
	contains "debug port: says there is none" "$TMP/err" "no debug output from that CPU"
else
	expect "debug port: the manifest says why nothing was recorded" python3 -c "
import json; p = json.load(open('$TMP/mark/run/manifest.json'))['trace']['debug_port']
assert p['recorded'] is False and p['why'].startswith('needs QEMU 9.0 or newer'), p"
	expect_rc "debug port: efipt log refuses a run without it" 1 $EFIPT log "$TMP/mark/run"
	contains "debug port: efipt log says why" "$TMP/err" "debugport.jsonl: No such file or directory (efipt qemu records the debug port with QEMU 9.0"
fi
# interrupt vectors (t_qemu_vectors checks them): recorded with plugin API
# 4, one record per event; else the manifest says what they need
expect "interrupt vectors: recorded for every event, or the manifest says they need QEMU 9.2" python3 -c "
import json, os; t = json.load(open('$TMP/mark/run/manifest.json'))['trace']; v = t['interrupts']
f = '$TMP/mark/run/interrupts.jsonl'
if v['recorded']:
    assert v['records'] == t['events'] == sum(1 for l in open(f)), (v, t['events'])
else:
    assert not os.path.exists(f) and v['why'].startswith('needs QEMU 9.2 or newer'), v"

# QEMU killed mid-run (SIGKILL: no atexit): the run directory says so
cat >"$TMP/killed-qemu.sh" <<'EOS'
#!/bin/sh
qemu-system-x86_64 "$@" &
sleep 3
kill -KILL $!
wait $!
EOS
chmod +x "$TMP/killed-qemu.sh"
# shellcheck disable=SC2086
expect_rc "efipt qemu: QEMU killed mid-run" 1 $EFIPT qemu --qemu "$TMP/killed-qemu.sh" \
	-o "$TMP/killed" --start protected -- $OVMF
contains "efipt qemu: the incomplete trace is named" "$TMP/err" "no manifest.json: QEMU ended (status 137) before the plugin finished the trace; trace.pt.tmp is incomplete"
expect "efipt qemu: no trace.pt presented as complete" sh -c "[ ! -e '$TMP/killed/trace.pt' ] && [ -e '$TMP/killed/trace.pt.tmp' ]"
expect_rc "efipt qemu: info refuses the unfinished run" 1 $EFIPT info "$TMP/killed"

# bad plugin arguments: QEMU refuses to start, naming the argument
expect_rc "bad argument: QEMU refuses" 1 qemu-system-x86_64 -machine q35 -display none \
	-nodefaults -plugin "$PLUGIN,dir=$TMP/bad,psb=12"
contains "bad argument: named" "$TMP/err" "efipt-qemu: plugin argument 'psb=12': PSB period in bytes"
expect_rc "no run directory: QEMU refuses" 1 qemu-system-x86_64 -machine q35 -display none \
	-nodefaults -plugin "$PLUGIN,psb=4096"
contains "no run directory: named" "$TMP/err" "dir=RUNDIR names the run directory"
expect_rc "a run directory already used: QEMU refuses" 1 qemu-system-x86_64 -machine q35 \
	-display none -nodefaults -plugin "$PLUGIN,dir=$TMP/pei/run"
contains "a run directory already used: named" "$TMP/err" "already holds a run: give a new dir="
expect "started: the host's local time" python3 -c "
import json, re; m=json.load(open('$TMP/pei/run/manifest.json'))
assert re.fullmatch(r'\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d', m['started']), m['started']"
