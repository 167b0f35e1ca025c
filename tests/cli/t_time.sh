# Time from timing packets in the analyses (docs/symbols.md, "Time"), on
# real build output (efipt.efi and its gnu-efi ELF build/efipt.so) traced
# by the synthesizer with a TSC packet in every PSB+: each function's
# exclusive and inclusive time must equal what the independent reference
# (tests/cli/stack_ref.py with the trace's packets) computes; a run
# directory's manifest and cpuid.txt give the TSC frequency.
. tests/lib.sh
. tests/cli/lib_timeline.sh
build_output time
HZ=3000000000

# --- efipt top's time against the reference ------------------------------------
# check_top NAME SYNTH-OPTIONS...: with --cyc the decoder and the reference
# convert CYCs at nominal ratio 32 (the synthesizer's CBR)
check_top() {
	name=$1
	shift
	nom=""
	case "$*" in *--cyc*) nom="--nom-freq 32" ;; esac
	$EFIPT synth --out "$TMP/t.pt" $PE --insns 60000 --tsc "$@" 2>/dev/null
	$EFIPT insn --pt "$TMP/t.pt" $PE --no-inst >"$TMP/t.lst"
	$EFIPT packets --format jsonl "$TMP/t.pt" >"$TMP/t.pk"
	python3 tests/cli/stack_ref.py "$SO" $BASE efipt.efi "$TMP/t.lst" "$TMP/ref.csv" \
		"$TMP/ref.folded" "$TMP/t.pk" $HZ "$TMP/ref.fns" ${nom:+nom=32}
	$EFIPT top --pt "$TMP/t.pt" $PE --symbols "$SO" --format csv --tsc-hz $HZ $nom >"$TMP/top.csv"
	if [ "$(tail -n +2 "$TMP/top.csv" | sort)" = "$(tail -n +2 "$TMP/ref.csv" | sort)" ] &&
	   [ "$(head -1 "$TMP/top.csv")" = "image,function,excl,incl,calls,excl_ns,incl_ns" ] &&
	   awk -F, 'NR > 1 && $6 > 0 { n++ } END { exit !(n > 3) }' "$TMP/top.csv"; then
		ok "$name: top's times equal the reference"
	else
		nok "$name: top's times equal the reference" "$(diff "$TMP/ref.csv" "$TMP/top.csv" | head -5)"
	fi
	$EFIPT flame --pt "$TMP/t.pt" $PE --symbols "$SO" --tsc-hz $HZ $nom --weight time >"$TMP/flame"
	if [ -s "$TMP/flame" ] && [ "$(sort "$TMP/flame")" = "$(sort "$TMP/ref.fns")" ]; then
		ok "$name: flame --weight time equals the reference"
	else
		nok "$name: flame --weight time equals the reference" "$(diff "$TMP/ref.fns" "$TMP/flame" | head -3 | cut -c1-200)"
	fi
}
# check_window NAME [from=F] [to=T]: top --from F --to T on check_top's
# last trace against the reference's window. A window's ends fall at an
# instruction, so each block has its time there, not only where frames change.
check_window() {
	name=$1
	shift
	wopt=""
	for a in "$@"; do wopt="$wopt --${a%%=*} ${a#*=}"; done
	python3 tests/cli/stack_ref.py "$SO" $BASE efipt.efi "$TMP/t.lst" "$TMP/wref.csv" \
		"$TMP/wref.folded" "$TMP/t.pk" $HZ "$TMP/wref.fns" ${nom:+nom=32} "$@"
	$EFIPT top --pt "$TMP/t.pt" $PE --symbols "$SO" --format csv --tsc-hz $HZ $nom $wopt >"$TMP/wtop.csv"
	if [ "$(tail -n +2 "$TMP/wtop.csv" | sort)" = "$(tail -n +2 "$TMP/wref.csv" | sort)" ] &&
	   awk -F, 'NR > 1 && $6 > 0 { n++ } END { exit !(n > 0) }' "$TMP/wtop.csv"; then
		ok "$name: top$wopt: the window's times equal the reference"
	else
		nok "$name: top$wopt: the window's times equal the reference" "$(diff "$TMP/wref.csv" "$TMP/wtop.csv" | head -5)"
	fi
	$EFIPT flame --pt "$TMP/t.pt" $PE --symbols "$SO" --tsc-hz $HZ $nom $wopt >"$TMP/wflame"
	$EFIPT flame --pt "$TMP/t.pt" $PE --symbols "$SO" --tsc-hz $HZ $nom $wopt --weight time >"$TMP/wflame.t"
	if [ -s "$TMP/wflame" ] && [ "$(sort "$TMP/wflame")" = "$(sort "$TMP/wref.folded")" ] &&
	   [ -s "$TMP/wflame.t" ] && [ "$(sort "$TMP/wflame.t")" = "$(sort "$TMP/wref.fns")" ]; then
		ok "$name: flame$wopt: the window's stacks and times equal the reference"
	else
		nok "$name: flame$wopt: the window's stacks and times equal the reference" \
			"$(diff "$TMP/wref.folded" "$TMP/wflame" | head -3 | cut -c1-200; diff "$TMP/wref.fns" "$TMP/wflame.t" | head -3 | cut -c1-200)"
	fi
}
check_top "time: plain" --seed 3 --psb-period 256
check_window "time: plain" from=5000 to=30000
check_top "time: PSB+ every 64 bytes" --seed 13 --psb-period 64
check_top "time: interrupts" --seed 4 --interrupts 300 --psb-period 256
check_top "time: many interrupts" --seed 12 --interrupts 1000 --psb-period 100

# jsonl and text carry the same times
$EFIPT top --pt "$TMP/t.pt" $PE --symbols "$SO" --format jsonl --tsc-hz $HZ >"$TMP/top.jsonl"
if python3 -c '
import csv, json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
ref = {r["function"]: r for r in csv.DictReader(open(sys.argv[2]))}
assert rows and all(set(r) == {"image", "function", "excl", "incl", "calls", "excl_ns", "incl_ns"} for r in rows)
assert all(r["excl_ns"] == int(ref[r["function"]]["excl_ns"]) and r["incl_ns"] == int(ref[r["function"]]["incl_ns"]) for r in rows)
assert all(r["incl_ns"] >= r["excl_ns"] for r in rows)
assert [r["excl_ns"] for r in rows] == sorted((r["excl_ns"] for r in rows), reverse=True)
' "$TMP/top.jsonl" "$TMP/ref.csv"; then ok "time: top jsonl rows, sorted by time"; else nok "time: top jsonl rows, sorted by time" "$(head -2 "$TMP/top.jsonl")"; fi
expect_rc "time: top text" 0 $EFIPT top --pt "$TMP/t.pt" $PE --symbols "$SO" --tsc-hz $HZ
contains "time: top text says the clock" "$TMP/out" "us traced (TSC 3000000000 Hz from --tsc-hz)"
contains "time: top text columns" "$TMP/out" "excl_us          incl_us  function"
expect_rc "time: top without a TSC frequency" 0 $EFIPT top --pt "$TMP/t.pt" $PE --symbols "$SO"
contains "time: ticks when the frequency is unknown" "$TMP/out" "TSC ticks traced (TSC frequency unknown"
expect_rc "time: bad --tsc-hz" 2 $EFIPT top --pt "$TMP/t.pt" $PE --tsc-hz 0
contains "time: bad --tsc-hz named" "$TMP/err" "--tsc-hz takes a frequency in Hz above 0, not '0'"

$EFIPT flame --pt "$TMP/t.pt" $PE --symbols "$SO" --weight insns >"$TMP/fi"
$EFIPT flame --pt "$TMP/t.pt" $PE --symbols "$SO" >"$TMP/fd"
if [ -s "$TMP/fi" ] && cmp -s "$TMP/fi" "$TMP/fd"; then ok "time: flame --weight insns is the default"; else nok "time: flame --weight insns is the default" "differs"; fi
expect_rc "time: flame --weight time without --tsc-hz" 0 $EFIPT flame --pt "$TMP/t.pt" $PE --symbols "$SO" --weight time
contains "time: flame says its weights are ticks" "$TMP/err" "the TSC frequency is unknown: weights are TSC ticks"
expect_rc "time: flame bad --weight" 2 $EFIPT flame --pt "$TMP/t.pt" $PE --weight cycles
contains "time: flame bad --weight named" "$TMP/err" "--weight takes insns or time, not 'cycles'"

check_top "time: CYC" --seed 3 --cyc --psb-period 256
check_top "time: CYC, interrupts" --seed 4 --cyc --interrupts 300
check_window "time: CYC, interrupts" from=5000 to=30000
check_window "time: CYC, interrupts" from=12345
check_window "time: CYC, interrupts" to=40001
# the time begins inside the window: the first PSB+'s TSC made PADs, the
# trace has no time until the next; a window opened just before
$EFIPT synth --out "$TMP/t.pt" $PE --insns 60000 --tsc --psb-period 4096 --seed 3 2>/dev/null
$EFIPT insn --pt "$TMP/t.pt" $PE --no-inst >"$TMP/t.lst"
tsc_off=$($EFIPT packets --format jsonl "$TMP/t.pt" | python3 -c '
import json, sys
print(next(p["off"] for p in map(json.loads, sys.stdin) if p["type"] == "tsc"))')
printf '\0\0\0\0\0\0\0\0' | dd of="$TMP/t.pt" bs=1 seek="$tsc_off" conv=notrunc 2>/dev/null
$EFIPT packets --format jsonl "$TMP/t.pt" >"$TMP/t.pk"
nom=""
# the window opens after the last frame change without time: the first
# time comes before the next (calls: the time, or the index before it)
$EFIPT calls --pt "$TMP/t.pt" $PE --symbols "$SO" --tsc-hz $HZ --index | awk '{ print $1 }' >"$TMP/ci"
open_at=$($EFIPT calls --pt "$TMP/t.pt" $PE --symbols "$SO" --tsc-hz $HZ | awk '{ print $1 }' |
	paste -d' ' "$TMP/ci" - | awk 'index($2, ".") { print p + 1; exit } { p = $1 }')
if [ -n "$open_at" ] && [ "$open_at" -gt 1000 ]; then
	check_window "time: the time begins in the window" from=$open_at
else
	nok "time: the time begins in the window" "no index found where the time begins ($open_at)"
fi
check_top "time: CYC, disables" --seed 6 --cyc --disable 2000
check_top "time: CYC, few PSBs" --seed 9 --cyc
cp "$TMP/t.pt" "$TMP/cyc.pt"
cp "$TMP/ref.csv" "$TMP/cyc.csv"

# no timing packets: no time columns
$EFIPT synth --out "$TMP/n.pt" $PE --insns 20000 --seed 3 2>/dev/null
$EFIPT top --pt "$TMP/n.pt" $PE --symbols "$SO" --format csv --tsc-hz $HZ >"$TMP/n.csv"
if [ "$(head -1 "$TMP/n.csv")" = "image,function,excl,incl,calls" ]; then ok "time: no timing, no time columns"; else nok "time: no timing, no time columns" "$(head -1 "$TMP/n.csv")"; fi
$EFIPT top --pt "$TMP/n.pt" $PE --symbols "$SO" >"$TMP/n.txt"
if grep -q "traced\|_us" "$TMP/n.txt"; then nok "time: no timing, text as before" "$(head -3 "$TMP/n.txt")"; else ok "time: no timing, text as before"; fi

# --- a run directory: the TSC frequency from its manifest or cpuid.txt -----------
D=$TMP/run
mkdir -p "$D"
python3 tests/cli/pe_snapshot.py "$EFI" $BASE "$D/mem-0000000001000000.bin" >"$TMP/pages"
pages=$(( $(cat "$TMP/pages") / 4096 ))
fa=$(readelf -sW "$SO" | awk '$8 == "efi_main" { print $2; exit }')
$EFIPT synth --out "$D/trace.pt" --raw "$D/mem-0000000001000000.bin:$BASE" --start $((BASE + 0x$fa)) --insns 20000 --seed 2 --tsc --psb-period 256 2>/dev/null
cat >"$D/memmap.json" <<EOM
{"regions": [{"type": "LoaderCode", "phys": "$BASE", "pages": $pages, "attr": "0xf", "snapshot": "mem-0000000001000000.bin"}]}
EOM
cat >"$D/images.json" <<EOM
{"images": [{"name": "efipt.efi", "base": "$BASE", "size": 364544, "code_type": "LoaderCode", "path": "", "pdb": ""}]}
EOM
# manifest TIMING [CPUID.TXT]: the run's manifest with that timing object
manifest() {
	rm -f "$D/cpuid.txt"
	names="trace.pt memmap.json images.json mem-0000000001000000.bin"
	if [ -n "$2" ]; then
		printf 'CPU:\n   0x00000000 0x00: eax=0x00000016 ebx=0x756e6547 ecx=0x6c65746e edx=0x49656e69\n   0x00000015 0x00: eax=%s\n' "$2" >"$D/cpuid.txt"
		names="$names cpuid.txt"
	fi
	files=""
	for f in $names; do
		files="$files${files:+,}{\"name\":\"$f\",\"size\":$(stat -c %s "$D/$f"),\"status\":\"written\"}"
	done
	cat >"$D/manifest.json" <<EOM
{"format":"efipt-run","format_version":1,"efipt_version":"0.1.0","run_id":"20260101-000000-000",
 "command":"trace","command_line":"trace","trace":{"rtit_ctl":"${RTIT:-0x2402}"},"timing":{$1},
 "files":[$files],"status":{"result":"ok","efi_status":"EFI_SUCCESS","message":"trace"}}
EOM
}
run_hz() {
	# (expect_rc sets name and want)
	rname=$1 clock=$2
	expect_rc "$rname" 0 $EFIPT top "$D" --symbols "$SO"
	contains "$rname: the clock named" "$TMP/out" "$clock"
}
manifest '"tsc_start":"0x0","tsc_hz":2500000000,"cpuid15_eax":2,"cpuid15_ebx":100,"cpuid15_ecx":38400000,"nom_freq":30'
run_hz "time: run dir timing.tsc_hz" "(TSC 2500000000 Hz from manifest timing.tsc_hz)"
manifest '"cpuid15_eax":2,"cpuid15_ebx":100,"cpuid15_ecx":38400000,"nom_freq":30' "0x00000002 ebx=0x000000b0 ecx=0x0249f000 edx=0x00000000"
run_hz "time: run dir timing.cpuid15_* win over cpuid.txt" "(TSC 1920000000 Hz from CPUID.15H)"
manifest '"nom_freq":30' "0x00000002 ebx=0x000000b0 ecx=0x0249f000 edx=0x00000000"
run_hz "time: run dir cpuid.txt leaf 15H" "(TSC 3379200000 Hz from CPUID.15H)"
manifest '"nom_freq":30' "0x00000002 ebx=0x000000b0 ecx=0x00000000 edx=0x00000000"
run_hz "time: run dir nominal ratio (15H without crystal Hz)" "(TSC 3000000000 Hz from nominal ratio)"
manifest '"tsc_start":"0x0"'
run_hz "time: run dir without a frequency" "TSC ticks traced (TSC frequency unknown"
manifest '"tsc_hz":"fast"'
expect_rc "time: run dir bad timing.tsc_hz" 2 $EFIPT top "$D" --symbols "$SO"
contains "time: bad timing.tsc_hz named" "$TMP/err" '"timing.tsc_hz" must be an integer'
expect_rc "time: flame --weight time without timing packets" 2 $EFIPT flame --pt "$TMP/n.pt" $PE --symbols "$SO" --weight time
contains "time: flame says the trace has no timing" "$TMP/err" "--weight time: the trace has no timing packets"

# --- efipt calls: time at each entry ----------------------------------------------
$EFIPT calls --pt "$TMP/t.pt" $PE --symbols "$SO" --tsc-hz $HZ >"$TMP/calls.t"
$EFIPT calls --pt "$TMP/t.pt" $PE --symbols "$SO" --index >"$TMP/calls.i"
$EFIPT calls --pt "$TMP/n.pt" $PE --symbols "$SO" --tsc-hz $HZ >"$TMP/calls.n"
$EFIPT calls --pt "$TMP/n.pt" $PE --symbols "$SO" --index >"$TMP/calls.ni"
if python3 -c '
import re, sys
t = open(sys.argv[1]).read().splitlines()
i = open(sys.argv[2]).read().splitlines()
assert len(t) == len(i) > 100
times = [float(l.split()[0]) for l in t]
assert all(re.match(r"^ *[0-9]+\.[0-9]{3}  ", l) for l in t)
assert times == sorted(times) and times[-1] > 0
assert [l[12:] for l in t] == [l[12:] for l in i]
idx = [int(l.split()[0]) for l in i]
assert idx == sorted(idx) and idx[-1] > 1000
' "$TMP/calls.t" "$TMP/calls.i"; then ok "time: calls shows us since the first timing packet, --index the index"; else nok "time: calls shows us since the first timing packet, --index the index" "$(head -3 "$TMP/calls.t")"; fi
if [ -s "$TMP/calls.n" ] && cmp -s "$TMP/calls.n" "$TMP/calls.ni"; then ok "time: calls without timing packets shows the index"; else nok "time: calls without timing packets shows the index" "differs"; fi
# a window from the start changes no time (calls reads the time where
# frames change, window or not; test_callstack compares that time with
# each block's)
$EFIPT calls --pt "$TMP/t.pt" $PE --symbols "$SO" --tsc-hz $HZ --from 0 >"$TMP/calls.w0"
if [ -s "$TMP/calls.t" ] && cmp -s "$TMP/calls.t" "$TMP/calls.w0"; then ok "time: calls --from 0 gives the same times"; else nok "time: calls --from 0 gives the same times" "$(diff "$TMP/calls.t" "$TMP/calls.w0" | head -3)"; fi

# --- efipt timeline: ts from the timing packets -----------------------------------
CHECK="python3 tests/cli/timeline_check.py"
check_tl() {
	name=$1
	shift
	flags=""
	case "$*" in *--distnt*) flags="--distnt --disretc" ;; esac
	$EFIPT synth --out "$TMP/x.pt" $PE --insns 60000 --tsc --psb-period 200 "$@" 2>/dev/null
	$EFIPT timeline --pt "$TMP/x.pt" $PE $flags --symbols "$SO" --tsc-hz $HZ -o "$TMP/x.json" 2>"$TMP/err"
	rc=$?
	$EFIPT flame --pt "$TMP/x.pt" $PE $flags --symbols "$SO" >"$TMP/x.folded" 2>/dev/null
	$EFIPT top --pt "$TMP/x.pt" $PE $flags --symbols "$SO" --tsc-hz $HZ --format csv >"$TMP/x.csv" 2>/dev/null
	if [ $rc -gt 1 ]; then
		nok "$name" "exit $rc: $(head -c 300 "$TMP/err")"
		return
	fi
	r=$($CHECK "$TMP/x.json" --flame "$TMP/x.folded" --top "$TMP/x.csv")
	if [ "$r" = ok ] && grep -q '"ts":[0-9]*\.[0-9][0-9][0-9],' "$TMP/x.json"; then ok "$name"; else nok "$name" "$r"; fi
	pf_same "$name: Perfetto's protobuf equals the JSON" "$TMP/x.json" --pt "$TMP/x.pt" $PE $flags --symbols "$SO" --tsc-hz $HZ
}
check_tl "time: timeline plain" --seed 3
check_tl "time: timeline interrupts" --seed 4 --interrupts 200
check_tl "time: timeline overflows and disables" --seed 6 --ovf 300 --disable 2000
check_tl "time: timeline DisTNT gaps" --seed 7 --distnt --disretc
check_tl "time: timeline power events (CBR)" --seed 8 --power 100 --ptwrite
contains "time: timeline CBR counter" "$TMP/x.json" '"ph":"C","pid":1,"tid":1,"ts":'
contains "time: timeline CBR in MHz" "$TMP/x.json" '"name":"CPU 0 frequency (CBR)","args":{"MHz":3200}}'
contains "time: timeline names the clock" "$TMP/x.json" '"time":"us (ns precision) since the first timing packet'
contains "time: timeline clock source" "$TMP/x.json" '"tsc_hz":3000000000,"tsc_hz_source":"--tsc-hz"'
if grep -q displayTimeUnit "$TMP/x.json"; then nok "time: timeline without displayTimeUnit" "present"; else ok "time: timeline without displayTimeUnit"; fi

# the checker rejects a timed file that goes back or does not name its clock
$EFIPT synth --out "$TMP/x.pt" $PE --insns 20000 --tsc --psb-period 200 --seed 3 2>/dev/null
$EFIPT timeline --pt "$TMP/x.pt" $PE --symbols "$SO" --tsc-hz $HZ -o "$TMP/x.json"
tl_bad() {
	sed "$2" "$TMP/x.json" >"$TMP/bad.json"
	r=$($CHECK "$TMP/bad.json")
	if [ "$r" != ok ]; then ok "time: timeline checker rejects $1"; else nok "time: timeline checker rejects $1" "accepted"; fi
}
tl_bad "ts going back" '0,/"ts":[1-9][0-9]*\.[0-9]*,"name"/{s/"ts":[1-9][0-9]*\.[0-9]*,"name"/"ts":0.000,"name"/}'
tl_bad "no tsc_hz" 's/"tsc_hz":3000000000,//'
tl_bad "a counter without args" '0,/"ph":"E","pid":1,"tid":1,"ts":\([0-9.]*\)}/{s/"ph":"E","pid":1,"tid":1,"ts":\([0-9.]*\)}/"ph":"C","pid":1,"tid":1,"ts":\1,"name":"x"},{"ph":"E","pid":1,"tid":1,"ts":\1}/}'
r=$($CHECK "$TMP/x.json")
[ "$r" = ok ] && ok "time: timeline checker accepts the file" || nok "time: timeline checker accepts the file" "$r"

# a run directory's clock: emulated time
manifest '"tsc_hz":1000000000,"emulated":true,"clock":"qemu icount shift=3: 8 ns per instruction"'
expect_rc "time: run dir timeline" 0 $EFIPT timeline "$D" --symbols "$SO" -o "$TMP/r.json"
contains "time: run dir timeline says emulated" "$TMP/r.json" '"tsc_hz":1000000000,"tsc_hz_source":"manifest timing.tsc_hz","tsc_first":'
contains "time: run dir timeline emulated true" "$TMP/r.json" '"emulated":true'
r=$($CHECK "$TMP/r.json")
[ "$r" = ok ] && ok "time: run dir timeline checks" || nok "time: run dir timeline checks" "$r"
pf_same "time: run dir timeline as Perfetto's protobuf" "$TMP/r.json" "$D" --symbols "$SO"

# --- efipt timeline: every CPU of a run directory, a track each -------------------
$EFIPT synth --out "$D/trace.cpu1.pt" --raw "$D/mem-0000000001000000.bin:$BASE" --start $((BASE + 0x$fa)) --insns 15000 --seed 5 --interrupts 300 --tsc --psb-period 256 2>/dev/null
$EFIPT synth --out "$D/trace.cpu3.pt" --raw "$D/mem-0000000001000000.bin:$BASE" --start $((BASE + 0x$fa)) --insns 10000 --seed 6 --tsc --psb-period 256 2>/dev/null
# smp TRACES-JSON [TIMING]: the manifest of a run with several CPUs
smp() {
	files=""
	for f in trace.pt trace.cpu1.pt trace.cpu3.pt memmap.json images.json mem-0000000001000000.bin; do
		files="$files${files:+,}{\"name\":\"$f\",\"size\":$(stat -c %s "$D/$f"),\"status\":\"written\"}"
	done
	cat >"$D/manifest.json" <<EOM
{"format":"efipt-run","format_version":1,"efipt_version":"0.1.0","run_id":"20260101-000000-000",
 "command":"qemu","command_line":"qemu -smp 3","trace":{"rtit_ctl":"0x2402","cpus":3,"traces":$1},
 "timing":{${2:-\"tsc_hz\":1000000000}},"files":[$files],"status":{"result":"ok","efi_status":"EFI_SUCCESS","message":"trace"}}
EOM
}
smp '[{"cpu":0,"file":"trace.pt","bytes":1,"insns":1},{"cpu":3,"file":"trace.cpu3.pt"},{"cpu":1,"file":"trace.cpu1.pt"}]'
expect_rc "time: timeline of 3 CPUs" 0 $EFIPT timeline "$D" --symbols "$SO" -o "$TMP/smp.json"
r=$($CHECK "$TMP/smp.json" --tracks 0,1,3)
[ "$r" = ok ] && ok "time: timeline of 3 CPUs: nested per track, CPU 0, 1, 3 named" || nok "time: timeline of 3 CPUs: nested per track, CPU 0, 1, 3 named" "$r"
pf_same "time: timeline of 3 CPUs as Perfetto's protobuf, a track each" "$TMP/smp.json" "$D" --symbols "$SO"
if python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
ev = d["traceEvents"]
names = {e["tid"]: e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "thread_name"}
assert names == {1: "CPU 0", 2: "CPU 1", 4: "CPU 3"}, names
per = {}
for e in ev:
    if e["ph"] == "B":
        per[e["tid"]] = per.get(e["tid"], 0) + 1
assert set(per) == {1, 2, 4} and all(n > 10 for n in per.values()), per
assert d["otherData"]["cpus"] == 3 and d["otherData"]["tsc_hz"] == 1000000000
' "$TMP/smp.json"; then ok "time: timeline of 3 CPUs: tids 1, 2, 4 with slices"; else nok "time: timeline of 3 CPUs: tids 1, 2, 4 with slices" "$(head -c 300 "$TMP/smp.json")"; fi
# --cpu N: one CPU's trace for top, flame, calls
$EFIPT top "$D" --symbols "$SO" --cpu 3 --format csv >"$TMP/c3.csv"
$EFIPT top --pt "$D/trace.cpu3.pt" --raw "$D/mem-0000000001000000.bin:$BASE" --images "$D/images.json" --symbols "$SO" --tsc-hz 1000000000 --format csv >"$TMP/p3.csv"
if [ -s "$TMP/c3.csv" ] && cmp -s "$TMP/c3.csv" "$TMP/p3.csv"; then ok "time: top --cpu 3 is CPU 3's trace"; else nok "time: top --cpu 3 is CPU 3's trace" "$(diff "$TMP/p3.csv" "$TMP/c3.csv" | head -3)"; fi
$EFIPT top "$D" --symbols "$SO" --format csv >"$TMP/c0.csv"
$EFIPT top "$D" --symbols "$SO" --cpu 0 --format csv >"$TMP/c00.csv"
if cmp -s "$TMP/c0.csv" "$TMP/c00.csv" && ! cmp -s "$TMP/c0.csv" "$TMP/c3.csv"; then ok "time: CPU 0 by default"; else nok "time: CPU 0 by default" "differs"; fi
expect_rc "time: flame --cpu 1" 0 $EFIPT flame "$D" --symbols "$SO" --cpu 1
expect_rc "time: calls --cpu 2 (not traced)" 2 $EFIPT calls "$D" --symbols "$SO" --cpu 2
contains "time: the CPUs traced named" "$TMP/err" "no trace of CPU 2: the run has 3 (CPUs 0, 3, 1)"
expect_rc "time: --cpu with --pt" 2 $EFIPT top --pt "$D/trace.pt" $PE --cpu 1
contains "time: --cpu with --pt said" "$TMP/err" "--cpu picks a CPU's trace of a run directory"
expect_rc "time: bad --cpu" 2 $EFIPT top "$D" --cpu x
contains "time: bad --cpu named" "$TMP/err" "--cpu wants a CPU number N or FAMILY/MODEL[/STEPPING], got 'x'"
# each CPU's track is that CPU's trace alone: CPU 1's slices as a run of its own
cp "$D/trace.pt" "$TMP/keep.pt"
cp "$D/trace.cpu1.pt" "$D/trace.pt"
smp '[{"cpu":0,"file":"trace.pt"}]'
$EFIPT timeline "$D" --symbols "$SO" -o "$TMP/one.json"
cp "$TMP/keep.pt" "$D/trace.pt"
if python3 -c '
import json, sys
a = [e for e in json.load(open(sys.argv[1]))["traceEvents"] if e["ph"] in "BE" and e["tid"] == 2]
b = [e for e in json.load(open(sys.argv[2]))["traceEvents"] if e["ph"] in "BE"]
strip = lambda l: [(e["ph"], e.get("name")) for e in l]
assert a and strip(a) == strip(b)
' "$TMP/smp.json" "$TMP/one.json"; then ok "time: timeline CPU 1's track is its trace's"; else nok "time: timeline CPU 1's track is its trace's" "differs"; fi
smp '[{"cpu":0,"file":"trace.pt"},{"cpu":9,"file":"trace.cpu9.pt"}]'
expect_rc "time: timeline with a CPU trace not written" 2 $EFIPT timeline "$D" --symbols "$SO" -o "$TMP/nofile.json"
contains "time: the missing CPU trace named" "$TMP/err" "manifest.json lists no trace.cpu9.pt"
smp '[{"cpu":0,"file":"trace.pt"},{"cpu":0,"file":"trace.pt"}]'
expect_rc "time: timeline with a CPU twice" 2 $EFIPT timeline "$D" --symbols "$SO" -o "$TMP/nofile.json"
contains "time: the CPU given twice named" "$TMP/err" "trace.traces lists CPU 0 twice"
smp '[{"cpu":0,"file":"../trace.pt"}]'
expect_rc "time: timeline with a path as a CPU's file" 2 $EFIPT timeline "$D" --symbols "$SO" -o "$TMP/nofile.json"
contains "time: the bad file named" "$TMP/err" "trace.traces[0]: CPU 0's trace is trace.pt, not '../trace.pt'"
smp '"none"'
expect_rc "time: timeline with traces not an array" 2 $EFIPT timeline "$D" --symbols "$SO" -o "$TMP/nofile.json"
contains "time: traces not an array named" "$TMP/err" '"trace.traces" must be an array'
if [ ! -e "$TMP/nofile.json" ]; then ok "time: no file from a bad run directory"; else nok "time: no file from a bad run directory" "written"; fi

# a run directory's nominal ratio reaches the decoder: CYCs count
cp "$TMP/cyc.pt" "$D/trace.pt"
manifest '"tsc_hz":3000000000,"nom_freq":32'
$EFIPT top "$D" --symbols "$SO" --format csv >"$TMP/rcyc.csv"
manifest '"tsc_hz":3000000000'
$EFIPT top "$D" --symbols "$SO" --format csv >"$TMP/rnonom.csv"
$EFIPT top --pt "$TMP/cyc.pt" $PE --symbols "$SO" --format csv --tsc-hz $HZ --nom-freq 32 >"$TMP/pcyc.csv"
if [ -s "$TMP/rcyc.csv" ] && cmp -s "$TMP/rcyc.csv" "$TMP/pcyc.csv"; then
	ok "time: run dir timing.nom_freq converts CYCs as --nom-freq does"
else
	nok "time: run dir timing.nom_freq converts CYCs as --nom-freq does" "$(diff "$TMP/pcyc.csv" "$TMP/rcyc.csv" | head -3)"
fi
if ! cmp -s "$TMP/rcyc.csv" "$TMP/rnonom.csv"; then ok "time: without the nominal ratio CYCs do not count"; else nok "time: without the nominal ratio CYCs do not count" "same"; fi
expect_rc "time: bad --nom-freq" 2 $EFIPT top "$D" --nom-freq 256
contains "time: bad --nom-freq named" "$TMP/err" "--nom-freq takes a ratio from 1 to 255, not '256'"

# --- MTC timing from a run directory: MTCFreq from trace.rtit_ctl, CPUID.15H from
# the manifest or cpuid.txt --------------------------------------------------------
$EFIPT synth --out "$D/trace.pt" --raw "$D/mem-0000000001000000.bin:$BASE" --start $((BASE + 0x$fa)) --insns 40000 --seed 7 --interrupts 200 --mtc --psb-period 2048 2>/dev/null
$EFIPT insn --pt "$D/trace.pt" --raw "$D/mem-0000000001000000.bin:$BASE" --no-inst >"$TMP/m.lst"
$EFIPT packets --format jsonl "$D/trace.pt" >"$TMP/m.pk"
python3 tests/cli/stack_ref.py "$SO" $BASE efipt.efi "$TMP/m.lst" "$TMP/mref.csv" "$TMP/mref.folded" \
	"$TMP/m.pk" $HZ - mtc=1,2,12
# TraceEn, MTCEn, TSCEn, BranchEn, MTCFreq 1
mtc_top() {
	$EFIPT top "$D" --symbols "$SO" --format csv >"$TMP/mtop.csv" 2>"$TMP/err"
	[ "$(tail -n +2 "$TMP/mtop.csv" | sort)" = "$(tail -n +2 "$TMP/mref.csv" | sort)" ]
}
RTIT=0x6601
manifest '"tsc_hz":3000000000,"cpuid15_eax":2,"cpuid15_ebx":12,"cpuid15_ecx":24000000'
if mtc_top; then ok "time: MTC: run dir manifest CPUID.15H and MTCFreq: top equals the reference"; else nok "time: MTC: run dir manifest CPUID.15H and MTCFreq: top equals the reference" "$(diff "$TMP/mref.csv" "$TMP/mtop.csv" | head -3)"; fi
manifest '"tsc_hz":3000000000' "0x00000002 ebx=0x0000000c ecx=0x016e3600 edx=0x00000000"
if mtc_top; then ok "time: MTC: CPUID.15H from cpuid.txt"; else nok "time: MTC: CPUID.15H from cpuid.txt" "$(diff "$TMP/mref.csv" "$TMP/mtop.csv" | head -3)"; fi
RTIT=0xe601
manifest '"tsc_hz":3000000000,"cpuid15_eax":2,"cpuid15_ebx":12'
if ! mtc_top; then ok "time: MTC: a wrong MTCFreq gives other times"; else nok "time: MTC: a wrong MTCFreq gives other times" "same"; fi
RTIT=0x6601
manifest '"tsc_hz":3000000000'
if ! mtc_top && awk -F, 'NR > 1 && $6 > 0 { n++ } END { exit !(n > 0) }' "$TMP/mtop.csv"; then ok "time: MTC: without CPUID.15H only the TSCs count"; else nok "time: MTC: without CPUID.15H only the TSCs count" "same"; fi

# --- timeline windows with time: --from/--to still count instructions --------------
$EFIPT synth --out "$TMP/w.pt" $PE --insns 60000 --tsc --psb-period 200 --seed 4 --interrupts 200 2>/dev/null
$EFIPT timeline --pt "$TMP/w.pt" $PE --symbols "$SO" --tsc-hz $HZ -o "$TMP/all.json"
expect_rc "time: timeline --from/--to/--depth with time" 0 $EFIPT timeline --pt "$TMP/w.pt" $PE --symbols "$SO" --tsc-hz $HZ -o "$TMP/w.json" --from 10000 --to 20000 --depth 3 --min-dur 5
r=$($CHECK "$TMP/w.json" --max-depth 3)
if [ "$r" = ok ] && python3 -c '
import json, sys
ts = lambda f: [e["ts"] for e in json.load(open(f))["traceEvents"] if "ts" in e]
w, a = ts(sys.argv[1]), ts(sys.argv[2])
assert w and 0 < min(w) and max(w) < max(a) and len(w) < len(a) / 4
' "$TMP/w.json" "$TMP/all.json"; then ok "time: timeline window inside the trace's time"; else nok "time: timeline window inside the trace's time" "$r"; fi

# --- time with inline frames ----------------------------------------------------
# --inline only splits a function's time among its inline frames: the totals
# stay, and inline frames that run get time of their own.
$EFIPT synth --out "$TMP/in.pt" $PE --insns 200000 --seed 3 --cyc >/dev/null 2>&1
for x in "" --inline; do
	$EFIPT top --pt "$TMP/in.pt" $PE --symbols "$SO" --format csv --tsc-hz $HZ --nom-freq 32 $x >"$TMP/in$x.csv"
	$EFIPT flame --pt "$TMP/in.pt" $PE --symbols "$SO" --tsc-hz $HZ --nom-freq 32 --weight time $x >"$TMP/in$x.folded"
done
sum() { awk -F"$1" -v c="$2" 'NR > ('"$3"') { s += $c } END { print s + 0 }' "$4"; }
t0=$(sum , 6 1 "$TMP/in.csv")
t1=$(sum , 6 1 "$TMP/in--inline.csv")
f0=$(awk '{ s += $NF } END { print s + 0 }' "$TMP/in.folded")
f1=$(awk '{ s += $NF } END { print s + 0 }' "$TMP/in--inline.folded")
if [ "$t0" -gt 0 ] && [ "$t0" = "$t1" ] && [ "$f0" = "$f1" ] && [ "$f0" -gt 0 ] &&
   awk -F, '$2 ~ /\[inlined\]/ && $6 > 0 { n++ } END { exit !(n > 0) }' "$TMP/in--inline.csv" &&
   grep -q 'inlined\] [1-9]' "$TMP/in--inline.folded"; then
	ok "inline: time is split among inline frames, totals unchanged (top $t0 ns, flame $f0 ns)"
else
	nok "inline: time is split among inline frames, totals unchanged" \
		"top $t0/$t1 ns, flame $f0/$f1 ns"
fi
