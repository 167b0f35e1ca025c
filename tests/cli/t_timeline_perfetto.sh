# efipt timeline as Perfetto's protobuf trace: the format chosen by the
# output's name or --format; each name written once; times as deltas on
# each track's sequence (the checker's sums); bad outputs leave
# nothing; and the JSON that speedscope reads (tests/cli/speedscope_model.py,
# a model of its importer's rules). That every slice of the protobuf equals
# the JSON's is checked on every timeline of t_timeline.sh and t_time.sh
# (tests/cli/lib_timeline.sh).
. tests/lib.sh
. tests/cli/lib_timeline.sh
build_output timeline_perfetto

$EFIPT synth --out "$TMP/e.pt" $PE --insns 60000 --seed 4 --interrupts 200 --ovf 300 2>/dev/null
run() { $EFIPT timeline --pt "$TMP/e.pt" $PE --symbols "$SO" "$@"; }
# is_pb FILE: starts as a Trace does (field 1, length-delimited), not as JSON
is_pb() { [ "$(head -c 1 "$1" | od -An -tx1 | tr -d ' ')" = 0a ]; }
is_json() { python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$1" 2>/dev/null; }

# --- the format -------------------------------------------------------------------
expect_rc "perfetto: -o FILE.pftrace" 0 run -o "$TMP/a.pftrace"
if is_pb "$TMP/a.pftrace"; then ok "perfetto: FILE.pftrace is protobuf"; else nok "perfetto: FILE.pftrace is protobuf" "$(head -c 40 "$TMP/a.pftrace")"; fi
expect_rc "perfetto: -o FILE.perfetto-trace" 0 run -o "$TMP/a.perfetto-trace"
if cmp -s "$TMP/a.pftrace" "$TMP/a.perfetto-trace"; then ok "perfetto: FILE.perfetto-trace is the same protobuf"; else nok "perfetto: FILE.perfetto-trace is the same protobuf" "differs"; fi
expect_rc "perfetto: -o FILE.json" 0 run -o "$TMP/a.json"
if is_json "$TMP/a.json"; then ok "perfetto: FILE.json is JSON"; else nok "perfetto: FILE.json is JSON" "not JSON"; fi
expect_rc "perfetto: --format perfetto -o FILE.json" 0 run --format perfetto -o "$TMP/b.json"
if cmp -s "$TMP/a.pftrace" "$TMP/b.json"; then ok "perfetto: --format perfetto wins over the name"; else nok "perfetto: --format perfetto wins over the name" "differs"; fi
expect_rc "perfetto: --format json -o FILE.pftrace" 0 run --format json -o "$TMP/b.pftrace"
if cmp -s "$TMP/a.json" "$TMP/b.pftrace"; then ok "perfetto: --format json wins over the name"; else nok "perfetto: --format json wins over the name" "differs"; fi
expect_rc "perfetto: --format other" 2 run --format proto -o "$TMP/c.pftrace"
contains "perfetto: --format other said" "$TMP/err" "--format takes json or perfetto, not 'proto'"
if [ ! -e "$TMP/c.pftrace" ]; then ok "perfetto: --format other writes nothing"; else nok "perfetto: --format other writes nothing" "written"; fi
expect_rc "perfetto: --help" 0 $EFIPT timeline --help
contains "perfetto: --help names --format" "$TMP/out" "--format json|perfetto"
contains "perfetto: --help names FILE.pftrace" "$TMP/out" "FILE.pftrace"
r=$(python3 tests/cli/pftrace_check.py "$TMP/a.pftrace" "$TMP/a.json" tests/data/perfetto_trace.proto)
if [ "$r" = ok ]; then ok "perfetto: the protobuf says what the JSON says"; else nok "perfetto: the protobuf says what the JSON says" "$r"; fi

# --- interned names: each written once ----------------------------------------------
# efi_main and LibOpenRoot begin many slices, "interrupt" names many instants,
# "offset" is an argument of every instant: each is in the file once
for name in 'efipt.efi`efi_main' 'efipt.efi`LibOpenRoot' 'interrupt' 'offset'; do
	nj=$(grep -o -F "\"$name\"" "$TMP/a.json" | wc -l)
	np=$(grep -a -o -F "$name" "$TMP/a.pftrace" | wc -l)
	if [ "$nj" -gt 2 ] && [ "$np" -eq 1 ]; then
		ok "perfetto: '$name' written once ($nj times in the JSON)"
	else
		nok "perfetto: '$name' written once ($nj times in the JSON)" "$np times"
	fi
done
# the checker itself refuses a name interned twice and a name used before it
# is interned (protoc text edited, then encoded again)
P=tests/data/perfetto_trace.proto
protoc --decode=perfetto.protos.Trace -I tests/data $P <"$TMP/a.pftrace" >"$TMP/a.txt"
reencode() {
	python3 -c "$1" "$TMP/a.txt" >"$TMP/m.txt" &&
		protoc --encode=perfetto.protos.Trace -I tests/data $P <"$TMP/m.txt" >"$TMP/m.pftrace"
}
pf_rejects() {
	r=$(python3 tests/cli/pftrace_check.py "$TMP/m.pftrace" "$TMP/a.json" $P)
	case "$r" in ok) nok "perfetto checker: rejects $1" "accepted" ;; *"$2"*) ok "perfetto checker: rejects $1" ;; *) nok "perfetto checker: rejects $1" "$r" ;; esac
}
reencode '
import sys
t = open(sys.argv[1]).read()
i = t.index("event_names {")
j = t.index("}", i) + 1
k = t.index("interned_data {", j + 200)
print(t[:k + len("interned_data {")] + "\n" + t[i:j].replace("iid: ", "iid: 9999") + t[k + len("interned_data {"):])
'
pf_rejects "a name interned twice" "interned twice"
reencode '
import re, sys
t = open(sys.argv[1]).read()
print(re.sub(r"name_iid: 3\b", "name_iid: 99999", t, count=1))
'
pf_rejects "a name used before it is interned" "not interned before"
reencode '
import sys
t = open(sys.argv[1]).read()
print(t.replace("type: TYPE_SLICE_END", "type: TYPE_INSTANT\n    name_iid: 1", 1))
'
pf_rejects "an end turned into an instant" "never end"
# each track's sequence counts time on clock 64, incremental from 0: the
# checker sums the deltas as Perfetto does, and refuses a clock that is not
# incremental, deltas read as whole times, an event on another sequence
reencode '
import sys
print(open(sys.argv[1]).read().replace("is_incremental: true", "is_incremental: false", 1))
'
pf_rejects "clock 64 not incremental" "not clock 64 incremental"
reencode '
import sys
print(open(sys.argv[1]).read().replace("    timestamp_clock_id: 64\n", ""))
'
pf_rejects "the deltas read as BOOTTIME" "goes back"
reencode '
import sys
t = open(sys.argv[1]).read()
print(t.replace("trusted_packet_sequence_id: 2\n  track_event", "trusted_packet_sequence_id: 1\n  track_event", 1))
'
pf_rejects "an event on the descriptors' sequence" "not described before"

# --- bad outputs leave nothing --------------------------------------------------------
expect_rc "perfetto: output directory missing" 2 run -o "$TMP/no/x.pftrace"
contains "perfetto: output directory named" "$TMP/err" "$TMP/no/x.pftrace"
if [ ! -e "$TMP/no" ]; then ok "perfetto: nothing made for a missing directory"; else nok "perfetto: nothing made for a missing directory" "$(ls -R "$TMP/no")"; fi
if [ -c /dev/full ]; then
	expect_rc "perfetto: write error (/dev/full)" 2 run -o /dev/full --format perfetto
	contains "perfetto: write error said" "$TMP/err" "/dev/full"
fi
mkdir "$TMP/ro"
echo keep >"$TMP/ro/keep.pftrace"
expect_rc "perfetto: a missing trace" 2 $EFIPT timeline --pt "$TMP/none.pt" $PE -o "$TMP/ro/keep.pftrace"
if [ "$(cat "$TMP/ro/keep.pftrace")" = keep ] && [ "$(ls "$TMP/ro")" = keep.pftrace ]; then
	ok "perfetto: a failed run leaves the old file and no temporary"
else
	nok "perfetto: a failed run leaves the old file and no temporary" "$(ls "$TMP/ro")"
fi
# an output path that is a directory: refused, the directory untouched
expect_rc "perfetto: -o a directory" 2 run -o "$TMP/ro"
if [ "$(ls "$TMP/ro")" = keep.pftrace ]; then ok "perfetto: -o a directory leaves it as it was"; else nok "perfetto: -o a directory leaves it as it was" "$(ls "$TMP/ro")"; fi
# a trace with nothing to decode: exit 1, a valid protobuf saying so
head -c 5 "$TMP/e.pt" >"$TMP/cut.pt"
expect_rc "perfetto: a trace with no PSB" 1 $EFIPT timeline --pt "$TMP/cut.pt" $PE -o "$TMP/cut.pftrace"
$EFIPT timeline --pt "$TMP/cut.pt" $PE -o "$TMP/cut.json" 2>/dev/null
r=$(python3 tests/cli/pftrace_check.py "$TMP/cut.pftrace" "$TMP/cut.json" $P)
if [ "$r" = ok ] && grep -a -q decode_errors "$TMP/cut.pftrace"; then ok "perfetto: the empty timeline is valid and describes itself"; else nok "perfetto: the empty timeline is valid and describes itself" "$r"; fi

# --- timed, the TSC frequency unknown: one tick as 1 us in both ------------------------------
$EFIPT synth --out "$TMP/t.pt" $PE --insns 30000 --seed 3 --tsc --mtc 2>/dev/null
$EFIPT timeline --pt "$TMP/t.pt" $PE --symbols "$SO" -o "$TMP/t.json" 2>/dev/null
contains "perfetto: ticks timeline names its clock" "$TMP/t.json" '"time":"TSC ticks (frequency unknown) since'
pf_same "perfetto: ticks timeline equals the JSON" "$TMP/t.json" --pt "$TMP/t.pt" $PE --symbols "$SO"
if grep -a -q "TSC ticks (frequency unknown), one microsecond each" "$TMP/pf.pftrace"; then ok "perfetto: ticks timeline says one tick is 1 us"; else nok "perfetto: ticks timeline says one tick is 1 us" "not said"; fi

# --- speedscope --------------------------------------------------------------------------
SPEEDSCOPE="python3 tests/cli/speedscope_model.py"
$EFIPT synth --out "$TMP/p.pt" $PE --insns 60000 --seed 3 2>/dev/null
$EFIPT timeline --pt "$TMP/p.pt" $PE --symbols "$SO" -o "$TMP/p.json" 2>/dev/null
r=$($SPEEDSCOPE "$TMP/p.json")
if [ "$r" = ok ]; then ok "speedscope: imports the timeline's slices exactly"; else nok "speedscope: imports the timeline's slices exactly" "$r"; fi
# E events without a name (the JSON before) are ignored by speedscope
sed 's/^{"name":"[^"]*","ph":"E"/{"ph":"E"/' "$TMP/p.json" >"$TMP/noname.json"
r=$($SPEEDSCOPE "$TMP/noname.json")
case "$r" in *"ignored"*) ok "speedscope: an E without its name is ignored (the model can fail)" ;; *) nok "speedscope: an E without its name is ignored (the model can fail)" "$r" ;; esac
# what speedscope cannot order: a frame of the same name ending and beginning at
# one ts (overflows close every frame at once): said in docs/timeline.md
r=$($SPEEDSCOPE "$TMP/a.json")
case "$r" in *"ignored"*|*"differ"*) ok "speedscope: equal-ts ends and begins of one name are its limit" ;; *) nok "speedscope: equal-ts ends and begins of one name are its limit" "$r" ;; esac
