# efipt qemu's hardware trace options (docs/qemu.md): the shared option
# table's --filter, --size/--mode, --tsc/--mtc/--cyc, refusals. Each traced
# run is checked against insnlog.so's record of the same QEMU process, and
# the timing packets against libipt's reading of them and QEMU's icount.
. tests/lib.sh
. tests/qemu/lib_qemu.sh

plugin_output "qemu trace options"
export EFIPT_QEMU_PLUGIN=$PLUGIN
QARGS=$(machine_args)

# run NAME EFIPT-QEMU-OPTIONS [QEMU-ARGS...]: efipt qemu with the logger in
# the same QEMU (skip=0: every execution); leaves $TMP/NAME/run, log.bin,
# qemu.out (its output), insn.txt (efipt insn --run --no-inst); LOGOPT=",skip=N"
# is added to the logger's options
run() {
	t=$1 opts=$2
	shift 2
	d=$TMP/$t
	# shellcheck disable=SC2086,SC2046
	expect_rc "$t: efipt qemu $opts" 0 nice -n 10 timeout 120 $EFIPT qemu -o "$d/run" $opts -- \
		$(ovmf_args "$d") "$@" -plugin "$LOGGER,out=$d/log.bin${LOGOPT:-}"
	cp "$TMP/out" "$d/qemu.out"
	expect_rc "$t: efipt insn --run decodes without errors" 0 $EFIPT insn --run "$d/run" --no-inst
	mv "$TMP/out" "$d/insn.txt"
}

# the code snapshots as FILE:ADDRESS for ipt_insns
snaps() {
	python3 -c "import json
for r in json.load(open('$1/memmap.json'))['regions']: print('$1/%s:%s' % (r['snapshot'], r['phys']))"
}

# ---- timing: -icount shift=3 (8 ns per instruction) -----------------------
run time "--start protected --limit 300000 --tsc --mtc --cyc" -icount shift=3,sleep=off
d=$TMP/time
if python3 tests/qemu/insnlog_cmp.py "$d/log.bin" "$d/insn.txt" "$d/run/manifest.json" 0 \
	>"$d/cmp.txt" 2>&1; then
	ok "time: decoded = executed with timing packets ($(cat "$d/cmp.txt"))"
else
	nok "time: decoded = executed with timing packets" "$(head -c 400 "$d/cmp.txt")"
fi
expect "time: rtit_ctl has TSCEn, MTCEn with MTCFreq 3, CYCEn; timing facts emulated" python3 -c "
import json; m=json.load(open('$d/run/manifest.json')); c=int(m['trace']['rtit_ctl'],16); t=m['timing']
assert c & (1<<10) and c & (1<<9) and (c >> 14) & 15 == 3 and c & 2, hex(c)
assert t['emulated'] is True and 'shift=3: 8 ns per instruction' in t['clock'], t
assert t['cpuid15_ebx'] * t['cpuid15_ecx'] // t['cpuid15_eax'] == t['tsc_hz'] == t['nom_freq'] * 100000000, t
assert int(t['tsc_start'],16) == m['trace']['first_call'] << 3, t"
# the manifest keeps the command as given, trace options included (the
# option table takes them out of argv before efipt qemu's own parser)
expect "time: manifest command_line is the whole command" python3 -c "
import json; c=json.load(open('$d/run/manifest.json'))['command_line']
assert c.startswith('qemu -o $d/run --start protected --limit 300000 --tsc --mtc --cyc -- '), c"
$EFIPT packets "$d/run/trace.pt" >"$d/packets.txt" 2>&1
expect "time: efipt packets shows TSC, TMA, CBR, MTC and CYC" python3 -c "
w=[l.split()[1] for l in open('$d/packets.txt') if len(l.split()) > 1]
assert all(k in w for k in ('tsc','tma','cbr','mtc','cyc')), set(w)"
# libipt reads the packets with the manifest's clock; its time per
# instruction must be QEMU's icount (the logger's call number) << 3
cfg=$(python3 -c "import json; m=json.load(open('$d/run/manifest.json')); t=m['timing']
print('%d,%d,%d,%d' % (t['cpuid15_eax'], t['cpuid15_ebx'], t['nom_freq'], (int(m['trace']['rtit_ctl'],16) >> 14) & 15))")
# shellcheck disable=SC2046
if "$IPT" --time "$cfg" "$d/run/trace.pt" $(snaps "$d/run") >"$d/ipt.txt" 2>"$d/ipt.err" &&
	python3 tests/qemu/time_cmp.py "$d/log.bin" "$d/ipt.txt" "$d/run/manifest.json" 2048 \
	>"$d/tcmp.txt" 2>&1; then
	ok "time: libipt's time per instruction is the instruction count << 3 ($(cat "$d/tcmp.txt"))"
else
	nok "time: libipt's time per instruction is the instruction count << 3" \
		"$(head -c 300 "$d/ipt.err") $(head -c 300 "$d/tcmp.txt")"
fi
expect "time: the check finds a clock that is off" sh -c "sed 's/ \([0-9a-f]*\)$/ 1\1/' '$d/ipt.txt' >'$d/ipt-off.txt' &&
	! python3 tests/qemu/time_cmp.py '$d/log.bin' '$d/ipt-off.txt' '$d/run/manifest.json' 2048"

# without -icount: 1 ns per instruction, said to be assumed
run time0 "--start protected --limit 20000 --tsc"
expect "time0: no -icount: shift 0, labelled assumed" python3 -c "
import json; t=json.load(open('$TMP/time0/run/manifest.json'))['timing']
assert 'shift=0 (no -icount: assumed): 1 ns per instruction' in t['clock'], t"

# ---- --size N --mode stop|wrap ----------------------------------------------
run stop "--start protected --size 16K --limit 2000000"
expect "stop: the trace ends full at no more than 16 KiB" python3 -c "
import json, os; t=json.load(open('$TMP/stop/run/manifest.json'))['trace']
assert t['stopped_by']=='full' and t['full'] is True and t['mode']=='stop', t
assert t['bytes'] <= 16384 and os.path.getsize('$TMP/stop/run/trace.pt') == t['bytes'], t"
d=$TMP/stop
if python3 tests/qemu/insnlog_part.py "$d/log.bin" "$d/insn.txt" "$d/run/manifest.json" prefix \
	>"$d/cmp.txt" 2>&1; then
	ok "stop: decodes to the first instructions executed ($(cat "$d/cmp.txt"))"
else
	nok "stop: decodes to the first instructions executed" "$(head -c 400 "$d/cmp.txt")"
fi

run wrap "--start protected --size 16K --mode wrap --limit 1000000"
d=$TMP/wrap
expect "wrap: 16 KiB kept of more, marked wrapped" python3 -c "
import json, os; t=json.load(open('$d/run/manifest.json'))['trace']
assert t['wrapped'] is True and t['mode']=='wrap' and t['generated'] > 16384, t
assert t['bytes'] == 16384 == os.path.getsize('$d/run/trace.pt'), t"
if python3 tests/qemu/insnlog_part.py "$d/log.bin" "$d/insn.txt" "$d/run/manifest.json" suffix \
	>"$d/cmp.txt" 2>&1; then
	ok "wrap: decodes to the last instructions executed ($(cat "$d/cmp.txt"))"
else
	nok "wrap: decodes to the last instructions executed" "$(head -c 400 "$d/cmp.txt")"
fi
expect "wrap: the check finds a prefix is not a suffix" sh -c "! python3 tests/qemu/insnlog_part.py \
	'$d/log.bin' '$d/insn.txt' '$d/run/manifest.json' prefix"
# shellcheck disable=SC2046
if "$IPT" "$d/run/trace.pt" $(snaps "$d/run") >"$d/ipt.txt" 2>"$d/ipt.err" &&
	grep -v '^\[' "$d/insn.txt" | cmp -s - "$d/ipt.txt"; then
	ok "wrap: libipt syncs at the first PSB and decodes the same"
else
	nok "wrap: libipt syncs at the first PSB and decodes the same" "$(head -c 300 "$d/ipt.err")"
fi

# ---- --filter A-B -----------------------------------------------------------
# probe NAME OPTIONS [QEMU-ARGS...]: a first, short efipt qemu run of the
# same firmware (no logger), in $TMP/NAME/run, to find where its code is
probe() {
	pd=$TMP/$1 po=$2
	shift 2
	mkdir -p "$pd" # for the output, before ovmf_args runs
	# shellcheck disable=SC2086,SC2046
	nice -n 10 timeout 120 $EFIPT qemu -o "$pd/run" $po -- $(ovmf_args "$pd") "$@" >"$pd/out" 2>&1
}
# a stretch of code entered and left by taken branches only, thousands of
# times early in SEC, chosen from the firmware's own first 300000
# instructions (tests/qemu/filter_range.py; in Debian 12's OVMF
# 0xfffcc999-0xfffcca5a, in SecMain's LZMA decoder)
filter_checks() {
run filter "--start protected --filter $F --limit 30000"
d=$TMP/filter
expect "filter: ADDR0_CFG=1 and the range in the manifest" python3 -c "
import json; t=json.load(open('$d/run/manifest.json'))['trace']
assert (int(t['rtit_ctl'],16) >> 32) & 15 == 1 and t['ranges'][0]['a']=='${F%-*}', t
assert t['insns'] == 30000 and t['filtered'] > 0, t"
if python3 tests/qemu/insnlog_part.py "$d/log.bin" "$d/insn.txt" "$d/run/manifest.json" filter \
	>"$d/cmp.txt" 2>&1; then
	ok "filter: decodes to exactly the executed instructions in range ($(cat "$d/cmp.txt"))"
else
	nok "filter: decodes to exactly the executed instructions in range" "$(head -c 400 "$d/cmp.txt")"
fi
expect "filter: TIP.PGE and TIP.PGD at the range edges" sh -c "$EFIPT packets '$d/run/trace.pt' |
	grep -c 'tip.pgd' | awk '{ exit !(\$1 > 100) }'"
}
probe filter-probe "--start protected --limit 300000"
d=$TMP/filter-probe
if $EFIPT insn --run "$d/run" >"$d/insn.txt" 2>"$d/err" &&
	F=$(python3 tests/qemu/filter_range.py "$d/insn.txt" 30000 2>>"$d/err"); then
	ok "filter: a stretch entered and left by branches only found in $CODE's first run ($F)"
	filter_checks
else
	nok "filter: a stretch entered and left by branches only found in $CODE's first run" \
		"$(tail -c 300 "$d/out") $(head -c 300 "$d/err")"
fi

# ---- --filter image=NAME: a PEI module, which runs in place ----------------
# PlatformPei's range comes from the flash's firmware volumes before QEMU
# starts. It first runs after about half a billion instructions (SEC
# decompresses the PEI and DXE volumes first; -icount makes that the same
# every run): a first run filtered to it finds where, and the logger records
# from 3 million before on (it counts REP iterations too: never later). With
# a range no code runs in mixed in.
image_checks() {
I="--filter 0x1000-0x10ff --filter image=PlatformPei"
LOGOPT=",skip=$SKIP" run image "--start protected $I --limit 5000" -icount shift=0,sleep=off
d=$TMP/image
contains "image: PlatformPei's range found in the flash before QEMU runs" "$d/qemu.out" \
	"efipt qemu: filter 1: image PlatformPei = 0x"
expect "image: ADDR0_CFG=ADDR1_CFG=1, the second range PlatformPei's PE/TE image" python3 -c "
import json; m=json.load(open('$d/run/manifest.json')); t=m['trace']
assert (int(t['rtit_ctl'],16) >> 32) & 0xff == 0x11 and t['ranges'][0]['a']=='0x1000', t
p=[i for i in json.load(open('$d/run/images.json'))['images'] if i['name']=='PlatformPei'][0]
r=t['ranges'][1]; b=int(p['base'],16)
assert (int(r['a'],16), int(r['b'],16)) == (b, b + p['size'] - 1), (r, p)
assert t['insns'] == 5000 and t['filtered'] > 10**8, t"
if python3 tests/qemu/insnlog_part.py "$d/log.bin" "$d/insn.txt" "$d/run/manifest.json" filter \
	$SKIP >"$d/cmp.txt" 2>&1; then
	ok "image: decodes to exactly the executed instructions in PlatformPei ($(cat "$d/cmp.txt"))"
else
	nok "image: decodes to exactly the executed instructions in PlatformPei" \
		"$(head -c 400 "$d/cmp.txt")"
fi
# the third instruction left out (not line 3: the events before the first
# instruction are the firmware's and the QEMU's, e.g. MODE.Exec and PIP)
expect "image: the check finds instructions left out" sh -c "awk '!/^\\[/ && ++n == 3 { next } 1' '$d/insn.txt' >'$d/insn-3.txt' &&
	! python3 tests/qemu/insnlog_part.py '$d/log.bin' '$d/insn-3.txt' '$d/run/manifest.json' filter $SKIP"
$EFIPT decode "$d/run" >"$d/decode.txt" 2>&1
expect "image: efipt decode names only PlatformPei, all 5000 instructions, no errors" python3 -c "
t=open('$d/decode.txt').read(); top=t.split('Top images by instructions:')[1].split()
assert 'Errors        0' in t and top[:3] == ['5000', '100.0%', 'PlatformPei'] and len(top) == 4, t"
$EFIPT top "$d/run" >"$d/top.txt" 2>&1
expect "image: efipt top names only PlatformPei" python3 -c "
r=[l.split() for l in open('$d/top.txt') if '%' in l and 'share' not in l]
assert r and all(x[-1].startswith('PlatformPei\`') for x in r), r"
}
probe image-probe "--start protected --filter image=PlatformPei --limit 1" -icount shift=0,sleep=off
if SKIP=$(python3 -c "import json; t=json.load(open('$TMP/image-probe/run/manifest.json'))['trace']
assert t['insns'] == 1, t
print(max(0, t['first_call'] + t['filtered'] - 3000000))" 2>"$TMP/image-probe/err"); then
	ok "image: where PlatformPei first runs found by a first run (logger from $SKIP on)"
	image_checks
else
	nok "image: where PlatformPei first runs found by a first run" \
		"$(tail -c 300 "$TMP/image-probe/out") $(tail -c 300 "$TMP/image-probe/err")"
fi

# ---- refused and bad options: before QEMU, no run directory ----------------
FW="-drive if=pflash,format=raw,unit=0,readonly=on,file=$CODE"
refuse() {
	name=$1 msg=$2
	shift 2
	# shellcheck disable=SC2086
	expect_rc "refuse $name" 2 timeout 60 $EFIPT qemu -o "$TMP/refused" "$@" -- $QARGS $FW
	contains "refuse $name: says why" "$TMP/err" "$msg"
}
# --cr3 goes to the plugin as cr3=, which compares CR3 (registers: QEMU 9.0
# on; t_qemu_cr3.sh traces with it); an older QEMU's plugin refuses it
qmajor=$(qemu-system-x86_64 --version | sed -n 's/^QEMU emulator version \([0-9]*\)\..*/\1/p')
if [ "${qmajor:-0}" -lt 9 ]; then
	# shellcheck disable=SC2086
	expect_rc "--cr3 on QEMU $qmajor: the plugin refuses it, QEMU does not start" 1 \
		timeout 60 $EFIPT qemu -o "$TMP/refused" --cr3 0x1000 -- $QARGS $FW
	contains "--cr3 on QEMU $qmajor: says it needs QEMU 9.0" "$TMP/err" \
		"cr3=: CR3 filtering needs QEMU 9.0 or newer (plugin API 2: registers)"
fi
refuse "--cr3 reserved bits" "--cr3 0x1001: bits 4:0 are reserved in IA32_RTIT_CR3_MATCH" --cr3 0x1001
refuse --output "--output: not for a trace QEMU emulates" --output topa
refuse --user "--user: not for a trace QEMU emulates: QEMU 7.2's plugins cannot read the CPL" --user
refuse "--filter image=DXE module" "--filter image=DxeCore: DxeCore is a DXE_CORE (FFS file D6A2CB7F-6A18-4E2F-B43B-9920A733700A) of $CODE: it is decompressed and loaded at an address chosen at run time" --filter image=DxeCore
contains "refuse --filter image=DXE module: says how to get its range" "$TMP/err" \
	"take it from a previous run (its images.json, or 'efipt info RUNDIR' with efipt.efi's images merged) and give --filter START-END"
contains "refuse --filter image=DXE module: lists what can be filtered" "$TMP/err" \
	"the modules that run in place, which image=NAME can filter: PeiCore, PcdPeim,"
refuse "--filter image=unknown" "--filter image=PlatformPe: no module of $CODE has that name; close matches: PlatformPei (runs in place), Tcg2PlatformPei (runs in place), PlatformDxe (loaded at run time); the modules that run in place" \
	--filter 1-2 --filter image=PlatformPe
# shellcheck disable=SC2086
expect_rc "refuse --filter image= without a flash image" 2 $EFIPT qemu -o "$TMP/refused" \
	--filter image=SecMain -- $QARGS -pflash "$TMP/none.fd"
contains "refuse --filter image= without a flash image: says why" "$TMP/err" \
	"--filter image=NAME: the flash image $TMP/none.fd cannot be read"
refuse "--psb 1024 (trace's parser)" "--psb needs a PSBFreq encoding 0..15 or a period of 2K..64M" --psb 1024
refuse "--mtc=16" "--mtc needs an encoding 0..15, got '16'" --mtc=16
refuse "a fifth range" "--filter: at most 4 address ranges" --filter 1-2 --filter 3-4 --filter 5-6 \
	--filter 7-8 --filter 9-10
refuse "wrap smaller than two PSB periods" "the size must be at least twice the PSB period" \
	--size 4K --mode wrap
# shellcheck disable=SC2086
expect_rc "refuse --tsc with -icount auto" 2 $EFIPT qemu -o "$TMP/refused" --tsc -- $QARGS $FW -icount auto
contains "refuse --tsc with -icount auto: says why" "$TMP/err" "need a fixed instruction rate: give QEMU -icount shift=N,sleep=off"
[ ! -e "$TMP/refused" ] && ok "refused options leave no run directory" ||
	nok "refused options leave no run directory" "$TMP/refused exists"
