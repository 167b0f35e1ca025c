# efipt timeline on real build output (efipt.efi and its gnu-efi ELF
# build/efipt.so), traced by the synthesizer: the file is trace event JSON
# whose B/E slices nest per track with ts never going back, whose slice
# names are efipt flame's frames and whose self times are efipt top's
# exclusive counts (tests/cli/timeline_check.py, which is shown to reject
# broken files first).
. tests/lib.sh
. tests/cli/lib_timeline.sh
build_output timeline
CHECK="python3 tests/cli/timeline_check.py"

# check NAME SYNTH-OPTIONS...: a trace, its timeline against flame and top
check() {
	name=$1
	shift
	flags=""
	case "$*" in *--distnt*) flags="--distnt --disretc" ;; esac
	$EFIPT synth --out "$TMP/t.pt" $PE --insns 60000 "$@" 2>/dev/null
	$EFIPT timeline --pt "$TMP/t.pt" $PE $flags --symbols "$SO" -o "$TMP/t.json" 2>"$TMP/err"
	rc=$?
	$EFIPT flame --pt "$TMP/t.pt" $PE $flags --symbols "$SO" >"$TMP/t.folded" 2>/dev/null
	$EFIPT top --pt "$TMP/t.pt" $PE $flags --symbols "$SO" --format csv >"$TMP/t.csv" 2>/dev/null
	if [ $rc -gt 1 ]; then
		nok "$name" "exit $rc: $(head -c 300 "$TMP/err")"
		return
	fi
	r=$($CHECK "$TMP/t.json" --flame "$TMP/t.folded" --top "$TMP/t.csv")
	if [ "$r" = ok ]; then ok "$name"; else nok "$name" "$r"; fi
	pf_same "$name: Perfetto's protobuf equals the JSON" "$TMP/t.json" --pt "$TMP/t.pt" $PE $flags --symbols "$SO"
}

check "timeline: plain trace" --seed 3
check "timeline: interrupts" --seed 4 --interrupts 200
check "timeline: overflows and disables" --seed 6 --ovf 300 --disable 2000
check "timeline: DisTNT gaps" --seed 7 --distnt --disretc
check "timeline: power events and ptwrite" --seed 8 --power 100 --ptwrite

# the instants the trace's events made
$EFIPT synth --out "$TMP/e.pt" $PE --insns 60000 --seed 4 --interrupts 200 --ovf 300 2>/dev/null
expect_rc "timeline: events trace" 0 $EFIPT timeline --pt "$TMP/e.pt" $PE --symbols "$SO" -o "$TMP/e.json"
for ev in '"tracing enabled"' '"interrupt"' '"overflow"'; do
	contains "timeline: instant $ev" "$TMP/e.json" "\"ph\":\"i\",\"s\":\"t\",\"pid\":1,\"tid\":1,\"ts\":"
	contains "timeline: instant $ev named" "$TMP/e.json" "\"name\":$ev"
done
contains "timeline: the CPU's track" "$TMP/e.json" '"name":"thread_name","pid":1,"tid":1,"args":{"name":"CPU 0"}'
contains "timeline: otherData says ts is the instruction index" "$TMP/e.json" '"time":"instruction index'
if grep -q displayTimeUnit "$TMP/e.json"; then
	nok "timeline: no displayTimeUnit" "present"
else
	ok "timeline: no displayTimeUnit"
fi

# the checker rejects broken files (it can fail)
$EFIPT flame --pt "$TMP/e.pt" $PE --symbols "$SO" >"$TMP/e.folded"
$EFIPT top --pt "$TMP/e.pt" $PE --symbols "$SO" --format csv >"$TMP/e.csv"
bad() {
	name=$1 sedexpr=$2
	sed "$sedexpr" "$TMP/e.json" >"$TMP/bad.json"
	r=$($CHECK "$TMP/bad.json" --flame "$TMP/e.folded" --top "$TMP/e.csv")
	if [ "$r" != ok ]; then ok "timeline checker: rejects $name"; else nok "timeline checker: rejects $name" "accepted"; fi
}
bad "a missing E" '0,/"ph":"E"/{/"ph":"E"/d}'
bad "ts going back" '0,/"ph":"B".*"ts":[1-9]/{s/\("ph":"B".*"ts":\)[1-9][0-9]*/\10/}'
bad "a renamed slice" '0,/efi_main/{s/efi_main/efi_mainX/}'
bad "displayTimeUnit" 's/^{"traceEvents":\[/{"displayTimeUnit":"ns","traceEvents":[/'
bad "a slice without pid" '0,/"ph":"B","pid":1,/{s/"ph":"B","pid":1,/"ph":"B",/}'
bad "cut JSON" '$d'

# --to reads no further than it decodes: the time base comes from the
# first PSB+ (a TSC there when TSC packets were on), not from a TSC far
# past the window. A trace without TSC packets, then one with (as two
# recordings one after the other): its window is by instruction index,
# the whole trace on the TSC's time.
$EFIPT synth --out "$TMP/n.pt" $PE --insns 60000 --seed 3 2>/dev/null
$EFIPT synth --out "$TMP/y.pt" $PE --insns 60000 --seed 5 --tsc 2>/dev/null
cat "$TMP/n.pt" "$TMP/y.pt" >"$TMP/ny.pt"
expect_rc "timeline: a trace with TSC packets only later" 0 $EFIPT timeline --pt "$TMP/ny.pt" $PE \
	--symbols "$SO" -o "$TMP/ny.json"
contains "timeline: the whole of it on the TSC's time" "$TMP/ny.json" '"time":"TSC ticks'
expect_rc "timeline: --to 1000 of it" 0 $EFIPT timeline --pt "$TMP/ny.pt" $PE --symbols "$SO" \
	-o "$TMP/nyw.json" --to 1000
contains "timeline: --to reads no TSC past its window" "$TMP/nyw.json" '"time":"instruction index'
expect_rc "timeline: --to 1000 of a trace with TSC packets" 0 $EFIPT timeline --pt "$TMP/y.pt" $PE \
	--symbols "$SO" -o "$TMP/yw.json" --to 1000
contains "timeline: its window on the TSC's time" "$TMP/yw.json" '"time":"TSC ticks'

# --depth, --min-dur, --from/--to
expect_rc "timeline: --depth 2" 0 $EFIPT timeline --pt "$TMP/e.pt" $PE --symbols "$SO" -o "$TMP/d.json" --depth 2
r=$($CHECK "$TMP/d.json" --max-depth 2)
if [ "$r" = ok ] && grep -q '"ph":"B"' "$TMP/d.json"; then ok "timeline: --depth 2 nests 2 deep at most"; else nok "timeline: --depth 2 nests 2 deep at most" "$r"; fi
pf_same "timeline: --depth 2 as Perfetto's protobuf" "$TMP/d.json" --pt "$TMP/e.pt" $PE --symbols "$SO" --depth 2
r=$($CHECK "$TMP/e.json" --max-depth 2)
if [ "$r" != ok ]; then ok "timeline: the full timeline is deeper"; else nok "timeline: the full timeline is deeper" "not deeper than 2"; fi
expect_rc "timeline: --min-dur 50" 0 $EFIPT timeline --pt "$TMP/e.pt" $PE --symbols "$SO" -o "$TMP/m.json" --min-dur 50
r=$($CHECK "$TMP/m.json" --min-dur 50)
if [ "$r" = ok ] && [ "$(grep -c '"ph":"B"' "$TMP/m.json")" -lt "$(grep -c '"ph":"B"' "$TMP/e.json")" ]; then
	ok "timeline: --min-dur drops short slices"
else
	nok "timeline: --min-dur drops short slices" "$r"
fi
pf_same "timeline: --min-dur 50 as Perfetto's protobuf" "$TMP/m.json" --pt "$TMP/e.pt" $PE --symbols "$SO" --min-dur 50
expect_rc "timeline: --from/--to" 0 $EFIPT timeline --pt "$TMP/e.pt" $PE --symbols "$SO" -o "$TMP/w.json" --from 10000 --to 20000
r=$($CHECK "$TMP/w.json" --from 10000 --to 20000)
if [ "$r" = ok ] && grep -q '"ts":10000,' "$TMP/w.json" && grep -q '"ts":20000}' "$TMP/w.json"; then
	ok "timeline: --from/--to cut the slices at the window"
else
	nok "timeline: --from/--to cut the slices at the window" "$r"
fi
pf_same "timeline: --from/--to as Perfetto's protobuf" "$TMP/w.json" --pt "$TMP/e.pt" $PE --symbols "$SO" --from 10000 --to 20000
$EFIPT top --pt "$TMP/e.pt" $PE --symbols "$SO" --format csv --from 10000 --to 20000 >"$TMP/tw.csv" 2>/dev/null
r=$($CHECK "$TMP/w.json" --top "$TMP/tw.csv")
total=$(awk -F, 'NR > 1 { s += $(NF - 2) } END { print s }' "$TMP/tw.csv")
if [ "$r" = ok ] && [ "$total" = 10000 ]; then ok "top --from/--to: its counts are the window's (10000 instructions, the timeline's self times)"; else nok "top --from/--to: its counts are the window's (10000 instructions, the timeline's self times)" "$r, total $total"; fi
$EFIPT flame --pt "$TMP/e.pt" $PE --symbols "$SO" --from 10000 --to 20000 >"$TMP/w.folded" 2>/dev/null
total=$(awk '{ s += $NF } END { print s + 0 }' "$TMP/w.folded")
r=$($CHECK "$TMP/w.json" --flame "$TMP/w.folded")
if [ "$r" = ok ] && [ "$total" = 10000 ]; then ok "flame --from/--to: 10000 instructions, the timeline's stacks"; else nok "flame --from/--to: 10000 instructions, the timeline's stacks" "$r, total $total"; fi
# a window from the start is the whole trace, by instructions and by time
$EFIPT flame --pt "$TMP/e.pt" $PE --symbols "$SO" >"$TMP/all.folded" 2>/dev/null
$EFIPT flame --pt "$TMP/e.pt" $PE --symbols "$SO" --from 0 >"$TMP/w0.folded" 2>/dev/null
$EFIPT flame --pt "$TMP/y.pt" $PE --symbols "$SO" --weight time >"$TMP/yall.folded" 2>/dev/null
$EFIPT flame --pt "$TMP/y.pt" $PE --symbols "$SO" --weight time --from 0 >"$TMP/yw0.folded" 2>/dev/null
if [ -s "$TMP/all.folded" ] && cmp -s "$TMP/all.folded" "$TMP/w0.folded" && [ -s "$TMP/yall.folded" ] && cmp -s "$TMP/yall.folded" "$TMP/yw0.folded"; then
	ok "flame --from 0: the whole trace's stacks (instructions and time)"
else
	nok "flame --from 0: the whole trace's stacks (instructions and time)" "$(diff "$TMP/all.folded" "$TMP/w0.folded" | head -3)"
fi
# and so is the timeline's (without a window it takes the time only where
# frames change, with one at each block)
$EFIPT timeline --pt "$TMP/y.pt" $PE --symbols "$SO" -o "$TMP/yall.json" 2>/dev/null
$EFIPT timeline --pt "$TMP/y.pt" $PE --symbols "$SO" --from 0 -o "$TMP/yw0.json" 2>/dev/null
grep -v '"otherData"' "$TMP/yall.json" >"$TMP/yall.ev"
grep -v '"otherData"' "$TMP/yw0.json" >"$TMP/yw0.ev"
if [ "$(grep -c '"ph":"B"' "$TMP/yall.ev")" -gt 100 ] && cmp -s "$TMP/yall.ev" "$TMP/yw0.ev"; then
	ok "timeline --from 0: the whole trace's slices, at the same times"
else
	nok "timeline --from 0: the whole trace's slices, at the same times" "$(diff "$TMP/yall.ev" "$TMP/yw0.ev" | head -3 | cut -c1-200)"
fi
expect_rc "top: --from a function that never runs" 2 $EFIPT top --pt "$TMP/e.pt" $PE --symbols "$SO" --from no_such_function
contains "top: the window that never opened said" "$TMP/err" "--from no_such_function: it never ran in the trace (the window never opened)"
expect_rc "top: an empty window" 2 $EFIPT top --pt "$TMP/e.pt" $PE --symbols "$SO" --from 20 --to 20
contains "top: an empty window said" "$TMP/err" "--from 20 --to 20: no instruction index is in [from, to)"
expect_rc "top: --from past the trace's end" 2 $EFIPT top --pt "$TMP/e.pt" $PE --symbols "$SO" --from 99999999
contains "top: the window past the end said as calls says it" "$TMP/err" "efipt top: --from 99999999: the trace ends before it (the window never opened)"
expect_rc "top: --to a function that never runs" 2 $EFIPT top --pt "$TMP/e.pt" $PE --symbols "$SO" --to no_such_function
contains "top: the window that never closed said as calls says it" "$TMP/err" "efipt top: --to no_such_function: it never ran in the trace after the window opened (the window never closed)"

# --from/--to FUNCTION: the window a function opens and closes is the one
# its first instruction's index makes (taken from efipt calls' listing:
# two functions that first run after instruction 10000, the second after
# the first, neither on the stack before)
$EFIPT calls --pt "$TMP/e.pt" $PE --symbols "$SO" >"$TMP/calls.txt" 2>/dev/null
set -- $(python3 -c '
import sys
seen, picked = set(), []
for l in open(sys.argv[1]):
    f = l.split()
    if len(f) < 2 or not f[0].isdigit():
        continue
    i, name = int(f[0]), f[1]
    if name not in seen and i > 10000 and "[" not in name and (not picked or i > picked[-1][0]):
        picked.append((i, name))
    seen.add(name)
    if len(picked) == 2:
        break
print(" ".join("%d %s" % p for p in picked))' "$TMP/calls.txt")
if [ $# -eq 4 ]; then
	n=$1 f=$2 m=$3 g=$4
	expect_rc "timeline: --from/--to FUNCTION" 0 $EFIPT timeline --pt "$TMP/e.pt" $PE --symbols "$SO" -o "$TMP/wf.json" --from "$f" --to "$g"
	expect_rc "timeline: --from/--to their indices" 0 $EFIPT timeline --pt "$TMP/e.pt" $PE --symbols "$SO" -o "$TMP/wn.json" --from "$n" --to "$m"
	r=$(python3 -c '
import json, sys
def slices(p):
    return [(e.get("ph"), e.get("name"), e.get("ts"), e.get("tid")) for e in json.load(open(p))["traceEvents"] if e.get("ph") in ("B", "E", "i", "C")]
a, b = slices(sys.argv[1]), slices(sys.argv[2])
print("ok" if a == b and a else "%d vs %d events" % (len(a), len(b)))' "$TMP/wf.json" "$TMP/wn.json")
	if [ "$r" = ok ]; then ok "timeline: a function's window is its first instruction's ($f at $n, $g at $m)"; else nok "timeline: a function's window is its first instruction's ($f at $n, $g at $m)" "$r"; fi
	contains "timeline: the file says its window" "$TMP/wf.json" "\"window_from\":\"$f (instruction $n)\",\"window_to\":\"$g (instruction $m)\""
	pf_same "timeline: --from/--to FUNCTION as Perfetto's protobuf" "$TMP/wf.json" --pt "$TMP/e.pt" $PE --symbols "$SO" --from "$f" --to "$g"
	expect_rc "calls: --from/--to FUNCTION" 0 $EFIPT calls --pt "$TMP/e.pt" $PE --symbols "$SO" --from "$f" --to "$g"
	mv "$TMP/out" "$TMP/cf.txt"
	expect_rc "calls: --from/--to their indices" 0 $EFIPT calls --pt "$TMP/e.pt" $PE --symbols "$SO" --from "$n" --to "$m"
	if [ -s "$TMP/cf.txt" ] && cmp -s "$TMP/cf.txt" "$TMP/out"; then ok "calls: a function's window is its first instruction's"; else nok "calls: a function's window is its first instruction's" "$(diff "$TMP/cf.txt" "$TMP/out" | head -3)"; fi
	# efipt top counts the same window: its exclusive counts are the
	# timeline's self times there, by index or by function
	$EFIPT top --pt "$TMP/e.pt" $PE --symbols "$SO" --format csv --from "$n" --to "$m" >"$TMP/tn.csv" 2>/dev/null
	$EFIPT top --pt "$TMP/e.pt" $PE --symbols "$SO" --format csv --from "$f" --to "$g" >"$TMP/tf.csv" 2>/dev/null
	r=$($CHECK "$TMP/wn.json" --top "$TMP/tn.csv")
	if [ "$r" = ok ] && cmp -s "$TMP/tn.csv" "$TMP/tf.csv"; then ok "top: a window's counts are the timeline's, by index or by function"; else nok "top: a window's counts are the timeline's, by index or by function" "$r $(diff "$TMP/tn.csv" "$TMP/tf.csv" | head -3)"; fi
	# efipt flame counts the same window: every instruction in it once, under
	# the stack it ran in, by index or by function
	$EFIPT flame --pt "$TMP/e.pt" $PE --symbols "$SO" --from "$n" --to "$m" >"$TMP/fn.folded" 2>/dev/null
	$EFIPT flame --pt "$TMP/e.pt" $PE --symbols "$SO" --from "$f" --to "$g" >"$TMP/ff.folded" 2>/dev/null
	total=$(awk '{ s += $NF } END { print s + 0 }' "$TMP/fn.folded")
	if [ "$total" = $((m - n)) ] && cmp -s "$TMP/fn.folded" "$TMP/ff.folded"; then ok "flame: a window's stacks hold its $((m - n)) instructions, by index or by function"; else nok "flame: a window's stacks hold its $((m - n)) instructions, by index or by function" "total $total"; fi
	# a window that holds nothing is said, not written empty
	expect_rc "top: --from a function that first runs after --to" 2 $EFIPT top --pt "$TMP/e.pt" $PE --symbols "$SO" --from "$f" --to 5
	contains "top: the empty window said" "$TMP/err" "--from $f: it did not run before --to 5 (the window is empty)"
	expect_rc "flame: --from a function that first runs after --to" 2 $EFIPT flame --pt "$TMP/e.pt" $PE --symbols "$SO" --from "$f" --to 5
	contains "flame: the empty window said" "$TMP/err" "--from $f: it did not run before --to 5 (the window is empty)"
	# --to FUNCTION before --from's: it closes only after the window opened
	expect_rc "calls: --to a function that ran before --from's" 0 $EFIPT calls --pt "$TMP/e.pt" $PE --symbols "$SO" --from "$g" --to "$f"
else
	nok "timeline: two functions for a window" "calls listed: $(head -3 "$TMP/calls.txt")"
fi
echo keep >"$TMP/keep.json"
expect_rc "timeline: --from a function that never runs" 2 $EFIPT timeline --pt "$TMP/e.pt" $PE --symbols "$SO" -o "$TMP/keep.json" --from no_such_function
contains "timeline: the window that never opened said" "$TMP/err" "--from no_such_function: it never ran in the trace (the window never opened)"
contains "timeline: the file before it is kept" "$TMP/keep.json" "keep"
expect_rc "calls: --from past the trace's end" 2 $EFIPT calls --pt "$TMP/e.pt" $PE --symbols "$SO" --from 99999999
contains "calls: the window past the end said" "$TMP/err" "--from 99999999: the trace ends before it (the window never opened)"
expect_rc "timeline: --from past the trace's end" 2 $EFIPT timeline --pt "$TMP/e.pt" $PE --symbols "$SO" --from 99999999 -o "$TMP/keep.json"
contains "timeline: the window past the end said, the file kept" "$TMP/keep.json" "keep"
expect_rc "calls: --to a function that never runs" 2 $EFIPT calls --pt "$TMP/e.pt" $PE --symbols "$SO" --to no_such_function
contains "calls: the window that never closed said" "$TMP/err" "--to no_such_function: it never ran in the trace after the window opened (the window never closed)"
expect_rc "calls: --from needs WHERE" 2 $EFIPT calls --pt "$TMP/e.pt" $PE --from 12x
contains "calls: a bad WHERE said" "$TMP/err" "--from needs an instruction index or a function (NAME or IMAGE\`NAME), got '12x'"
expect_rc "calls: --to -1 is no WHERE" 2 $EFIPT calls --pt "$TMP/e.pt" $PE --to -1
contains "calls: --to -1 said at once, not after decoding" "$TMP/err" "--to needs an instruction index or a function (NAME or IMAGE\`NAME), got '-1'"
$EFIPT calls --pt "$TMP/e.pt" $PE --symbols "$SO" --to 0100 >"$TMP/w010.txt" 2>/dev/null
$EFIPT calls --pt "$TMP/e.pt" $PE --symbols "$SO" --to 100 >"$TMP/w10.txt" 2>/dev/null
$EFIPT calls --pt "$TMP/e.pt" $PE --symbols "$SO" --to 0x64 >"$TMP/w0xa.txt" 2>/dev/null
if [ -s "$TMP/w10.txt" ] && cmp -s "$TMP/w010.txt" "$TMP/w10.txt" && cmp -s "$TMP/w0xa.txt" "$TMP/w10.txt"; then ok "calls: --to 0100, 100 and 0x64 are one index (decimal, never octal)"; else nok "calls: --to 0100, 100 and 0x64 are one index" "$(wc -l "$TMP"/w010.txt "$TMP"/w10.txt "$TMP"/w0xa.txt)"; fi

# a long trace path with a quote and invalid UTF-8: still valid JSON
long="$TMP"
for i in 1 2 3 4 5 6 7 8 9 10 11 12; do
	long="$long/$(printf 'd%0200d' $i)"
done
long="$long/q\"$(printf '\377')"
mkdir -p "$long"
cp "$TMP/e.pt" "$long/t.pt"
expect_rc "timeline: a long, odd trace path" 0 $EFIPT timeline --pt "$long/t.pt" $PE --symbols "$SO" -o "$TMP/l.json"
r=$($CHECK "$TMP/l.json")
if [ "$r" = ok ] && grep -qF 'q\"\\xff/t.pt' "$TMP/l.json"; then ok "timeline: the path escaped, whole"; else nok "timeline: the path escaped, whole" "$r"; fi
pf_same "timeline: a long, odd trace path as Perfetto's protobuf (UTF-8, as the JSON shows it)" "$TMP/l.json" --pt "$long/t.pt" $PE --symbols "$SO"

# errors: usage, nothing half-written
expect_rc "timeline: -o required" 2 $EFIPT timeline --pt "$TMP/e.pt" $PE
contains "timeline: -o required said" "$TMP/err" "-o FILE.json is required"
expect_rc "timeline: --to before --from" 2 $EFIPT timeline --pt "$TMP/e.pt" $PE -o "$TMP/x.json" --from 5 --to 5
contains "timeline: --to before --from said" "$TMP/err" "--to 5 is not after --from 5"
expect_rc "timeline: bad --min-dur" 2 $EFIPT timeline --pt "$TMP/e.pt" $PE -o "$TMP/x.json" --min-dur x
contains "timeline: bad --min-dur said" "$TMP/err" "--min-dur takes a number, not 'x'"
expect_rc "timeline: output directory missing" 2 $EFIPT timeline --pt "$TMP/e.pt" $PE -o "$TMP/no/x.json"
contains "timeline: output directory named" "$TMP/err" "$TMP/no/x.json"
echo keep >"$TMP/keep.json"
expect_rc "timeline: a missing trace" 2 $EFIPT timeline --pt "$TMP/none.pt" $PE -o "$TMP/keep.json"
contains "timeline: the missing trace named" "$TMP/err" "$TMP/none.pt"
if [ "$(cat "$TMP/keep.json")" = keep ] && ! ls "$TMP" | grep -q '^keep.json.tmp'; then
	ok "timeline: a failed run leaves the old file and no temporary"
else
	nok "timeline: a failed run leaves the old file and no temporary" "$(ls "$TMP")"
fi
# a trace with nothing to decode: said, exit 1, an empty but valid timeline
head -c 5 "$TMP/e.pt" >"$TMP/cut.pt"
expect_rc "timeline: a trace with no PSB" 1 $EFIPT timeline --pt "$TMP/cut.pt" $PE -o "$TMP/cut.json"
contains "timeline: no PSB said" "$TMP/err" "no PSB found"
r=$($CHECK "$TMP/cut.json")
if [ "$r" = ok ] && grep -q '"decode_errors":1' "$TMP/cut.json"; then ok "timeline: the empty timeline is valid and counts the error"; else nok "timeline: the empty timeline is valid and counts the error" "$r"; fi
if [ -s /dev/full ] || [ -c /dev/full ]; then
	expect_rc "timeline: write error" 2 $EFIPT timeline --pt "$TMP/e.pt" $PE -o /dev/full
fi
expect_rc "timeline: --help" 0 $EFIPT timeline --help
contains "timeline: --help names the options" "$TMP/out" "--min-dur N"
