# efipt timeline writes as it decodes, in memory that does not grow with
# the trace: on random walks of 0.5 and 2 million instructions through
# efipt.efi the events waiting in memory (EFIPT_TIMELINE_PEAK) stay at the
# same small bound while the slices grow with the trace; each timeline
# still nests, never goes back, names flame's frames and has top's self
# times (tests/cli/timeline_check.py); a timed trace cut by --from/--to
# too (frames open at --from begin at --from's time); a trace on a pipe
# gives the file's timeline.
. tests/lib.sh
. tests/cli/lib_timeline.sh
build_output timeline-stream
CHECK="python3 tests/cli/timeline_check.py"

# walk NAME N SYNTH-OPTIONS...: $TMP/NAME.pt, N million instructions
walk() {
	name=$1 n=$2
	shift 2
	$EFIPT synth --out "$TMP/$name.pt" $PE --insns ${n}000000 --size 1G "$@" >/dev/null 2>&1
}

# held NAME CHECK TIMELINE-ARGS...: the timeline's peak of waiting events,
# its slices (otherData); CHECK 1: against flame and top (all slices kept)
held() {
	name=$1 against=$2
	shift 2
	EFIPT_TIMELINE_PEAK=1 $EFIPT timeline --pt "$TMP/$name.pt" $PE --symbols "$SO" "$@" \
		-o "$TMP/$name.json" 2>"$TMP/$name.err"
	peak=$(sed -n 's/.*CPU 0: \([0-9]*\) events held at most/\1/p' "$TMP/$name.err")
	slices=$(sed -n 's/.*"slices":\([0-9]*\).*/\1/p' "$TMP/$name.json")
	[ "$against" = 1 ] || return 0
	$EFIPT flame --pt "$TMP/$name.pt" $PE --symbols "$SO" >"$TMP/$name.folded" 2>/dev/null
	$EFIPT top --pt "$TMP/$name.pt" $PE --symbols "$SO" --format csv >"$TMP/$name.csv" 2>/dev/null
	r=$($CHECK "$TMP/$name.json" --flame "$TMP/$name.folded" --top "$TMP/$name.csv")
	if [ "$r" = ok ]; then ok "timeline stream: $name nests, equals flame and top"
	else nok "timeline stream: $name nests, equals flame and top" "$r"; fi
}

walk short 1 --seed 11
walk long 4 --seed 11
held short 1
p1=$peak s1=$slices
held long 1
p4=$peak s4=$slices
# what waits: the open frames' begins (the model's stack is 1024 frames at
# most), the ends of a stack closed at once and a batch's blocks, whatever
# the trace's length: under one bound while the slices grow with the trace
# (how deep each walk goes depends on the code of efipt.efi it walks, so
# the two peaks are not compared with each other)
if [ -n "$p1" ] && [ -n "$p4" ] && [ "$p1" -le 1300 ] && [ "$p4" -le 1300 ] &&
	[ "${s4:-0}" -gt $((3 * ${s1:-0})) ]; then
	ok "timeline stream: memory bounded ($p1 and $p4 events held, $s1 and $s4 slices)"
else
	nok "timeline stream: memory bounded" "held $p1 and $p4, slices $s1 and $s4"
fi
# a large --min-dur holds the instants of that many instructions, no more
walk events 1 --seed 12 --interrupts 50 --ovf 20
held events 0 --min-dur 100
pe=$peak
if [ -n "$pe" ] && [ "$pe" -le 1300 ]; then ok "timeline stream: --min-dur 100 holds $pe events"
else nok "timeline stream: --min-dur 100 holds few events" "$pe"; fi

# timed, cut by --from/--to: the frames open at --from begin at its time
walk timed 2 --seed 4 --tsc --interrupts 20 --ovf 30 --disable 200 --power 10 --ptwrite
$EFIPT timeline --pt "$TMP/timed.pt" $PE --symbols "$SO" --from 100000 --to 900000 \
	-o "$TMP/timed.json" 2>"$TMP/timed.err"
r=$(python3 - "$TMP/timed.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
last, n = {}, 0
ev = [e for e in d["traceEvents"] if "ts" in e]
# the frames open at --from (the begins before anything else) begin at its time
lead = set()
for e in ev:
    if e["ph"] != "B":
        break
    lead.add(e["ts"])
if len(lead) != 1:
    print("the frames open at --from begin at %d times" % len(lead))
    sys.exit()
for e in d["traceEvents"]:
    if "ts" in e:
        if e["ts"] < last.get(e["tid"], 0):
            print("ts %s after %s" % (e["ts"], last[e["tid"]]))
            sys.exit()
        last[e["tid"]] = e["ts"]
        n += e["ph"] == "B"
print("ok" if n and n == d["otherData"]["slices"] else "%d slices, otherData %s" % (n, d["otherData"]["slices"]))
PY
)
if [ "$r" = ok ]; then ok "timeline stream: timed --from/--to begins at --from's time, never goes back"
else nok "timeline stream: timed --from/--to begins at --from's time, never goes back" "$r"; fi
pf_same "timeline stream: timed --from/--to, Perfetto equals JSON" "$TMP/timed.json" \
	--pt "$TMP/timed.pt" $PE --symbols "$SO" --from 100000 --to 900000

# a trace on a pipe: read once for its first TSC, then decoded
cat "$TMP/timed.pt" | $EFIPT timeline --pt - $PE --symbols "$SO" -o "$TMP/pipe.json" 2>"$TMP/pipe.err"
$EFIPT timeline --pt - $PE --symbols "$SO" -o "$TMP/file.json" <"$TMP/timed.pt" 2>/dev/null
if [ -s "$TMP/pipe.json" ] && cmp -s "$TMP/pipe.json" "$TMP/file.json" &&
	grep -q '"time":"TSC ticks' "$TMP/pipe.json"; then
	ok "timeline stream: a trace on a pipe"
else
	nok "timeline stream: a trace on a pipe" "$(head -c 300 "$TMP/pipe.err")"
fi
