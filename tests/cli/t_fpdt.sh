# The firmware's boot-performance records (fpdt.bin) in efipt info, timeline
# and diff: a run directory with crafted FPDT, FBPT and S3PT tables
# (tests/cli/fpdt_gen.py, the layouts of the ACPI specification and EDK2's
# extended records), good and damaged.
. tests/lib.sh
. tests/cli/lib_rundir.sh
GA=11111111-2222-3333-4444-555555555555
# the image of the synthesized trace carries the GUID of the first StartImage
cat >"$D/images.json" <<EOM
{"images":[{"name":"loop.efi","base":"0x1000","size":4096,"code_type":"LoaderCode","path":"Fv(7cb8bdc9-f8eb-4f34-aaea-3ee4af6516a1)/FvFile($GA)","pdb":"","entry":"0x1000"}]}
EOM
python3 tests/cli/fpdt_gen.py bin "$D/fpdt.bin"
manifest "$D"

expect_rc "info: a run with fpdt.bin" 0 $EFIPT info "$D"
contains "info: the tables" "$TMP/out" "FPDT         fpdt.bin: FPDT FBPT S3PT; 16 records, 6 measurements"
contains "info: the basic boot record" "$TMP/out" "ExitBootServicesExit              960.000 us since reset"
contains "info: StartImage named by the image with its GUID" "$TMP/out" \
	"100.000        200.000  StartImage   loop.efi"
contains "info: StartImage of a GUID no image has" "$TMP/out" \
	"400.000         50.000  StartImage   aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee"
contains "info: a function's string record" "$TMP/out" "410.000         10.000  Function     InitThing"
contains "info: DB:Start" "$TMP/out" "500.000         20.000  DB:Start     PciBusDxe"
contains "info: Callback" "$TMP/out" "600.000          1.000  Callback     OnReady"
contains "info: a single event" "$TMP/out" "700.000        (event)  Event        Mark"
contains "info: S3 resume" "$TMP/out" "S3 resume: count 1, the last 2.000 us, average 2.000 us"
if grep -q damaged "$TMP/out" "$TMP/err"; then nok "info: nothing damaged" "$(cat "$TMP/err")"; else ok "info: nothing damaged"; fi

# damaged records: named (offset, type, length) and skipped; the rest listed
D2=$TMP/damaged
cp -r "$D" "$D2"
python3 tests/cli/fpdt_gen.py bin "$D2/fpdt.bin" --damaged
expect_rc "info: damaged FPDT records are no damaged run" 0 $EFIPT info "$D2"
# FPDT 68 bytes, FBPT header 8, basic boot 48, then 34+34+58+58+34+34+66+66+74+74+58: 714
contains "info: a record shorter than its fields named" "$TMP/err" \
	"fpdt.bin: offset 714: record type 0x1010, length 20: shorter than its type's fields: skipped"
contains "info: a record below its header named" "$TMP/err" \
	"offset 734: record type 0x1010, length 3: record length below its 4-byte header: skipped"
contains "info: the damaged ones said in the listing" "$TMP/out" "2 damaged (skipped)"
contains "info: the good records still listed" "$TMP/out" "600.000          1.000  Callback     OnReady"
contains "info: the table after the damage still read" "$TMP/out" "S3 resume: count 1"

# a table cut short: named, the tables before it listed
D3=$TMP/cut
cp -r "$D" "$D3"
head -c 300 "$D/fpdt.bin" >"$D3/fpdt.bin"
expect_rc "info: fpdt.bin cut short" 0 $EFIPT info "$D3"
contains "info: the cut table named" "$TMP/err" "offset 68: table (length 646): table passes the file's end: skipped"
contains "info: the FPDT before it read" "$TMP/out" "fpdt.bin: FPDT; 2 records, 0 measurements"

# no fpdt.bin: no section
expect_rc "info: a run without fpdt.bin" 0 $EFIPT info "$TMP/run/../run"
D4=$TMP/none
cp -r "$D" "$D4" && rm "$D4/fpdt.bin"
expect_rc "info: no fpdt.bin" 0 $EFIPT info "$D4"
if grep -q '^FPDT' "$TMP/out"; then nok "info: no FPDT section without fpdt.bin" "$(cat "$TMP/out")"; else ok "info: no FPDT section without fpdt.bin"; fi
mkdir "$D4/fpdt.bin"
expect_rc "info: fpdt.bin a directory" 1 $EFIPT info "$D4"
contains "info: fpdt.bin a directory named" "$TMP/err" "fpdt.bin: not a regular file"

# timeline: the records as tracks beside the CPU's, in JSON and in Perfetto's
# protobuf (which must say what the JSON says: tests/cli/pftrace_check.py)
. tests/cli/lib_timeline.sh
fpdt_events() { # JSON FILE: the FPDT tracks' events, one "ph tid ts name" a line
	python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
names = {e["tid"]: e["args"]["name"] for e in d["traceEvents"] if e.get("ph") == "M" and e.get("name") == "thread_name"}
for e in d["traceEvents"]:
    if e.get("ph") in "BEi" and names.get(e.get("tid"), "").startswith("Firmware FPDT"):
        print(e["ph"], names[e["tid"]], e["ts"], e["name"])
print("fpdt_time", d["otherData"].get("fpdt_time", "-"))
' "$1"
}
expect_rc "timeline: a run with fpdt.bin" 0 $EFIPT timeline "$D" -o "$TMP/tl.json"
fpdt_events "$TMP/tl.json" >"$TMP/ev"
contains "timeline: StartImage as a slice" "$TMP/ev" "B Firmware FPDT: measurements 100 StartImage loop.efi"
contains "timeline: its end" "$TMP/ev" "E Firmware FPDT: measurements 300 StartImage loop.efi"
contains "timeline: a function nested in B's StartImage" "$TMP/ev" "B Firmware FPDT: measurements 410 Function InitThing"
contains "timeline: basic boot as instants" "$TMP/ev" "i Firmware FPDT: basic boot and events 960 ExitBootServicesExit"
contains "timeline: a single event as an instant" "$TMP/ev" "i Firmware FPDT: basic boot and events 700 Event Mark"
contains "timeline: not aligned without time" "$TMP/ev" "fpdt_time ns since reset, from 0: not aligned"
pf_same "timeline: Perfetto's FPDT tracks say what the JSON's say" "$TMP/tl.json" "$D"
# every track, the FPDT ones too: ts never goes back, slices strictly nested
r=$(python3 tests/cli/timeline_check.py "$TMP/tl.json")
[ "$r" = ok ] && ok "timeline: the FPDT tracks pass the timeline checker" || nok "timeline: checker" "$r"
# with TSC packets at a known frequency the records sit on the trace's clock:
# at 1 GHz a record's ns since reset less the first TSC (otherData tsc_first)
$EFIPT synth --raw "$D/mem-0000000000001000.bin:0x1000" --start 0x1000 --out "$D/trace.pt" --insns 3000 --tsc 2>/dev/null
manifest "$D"
expect_rc "timeline: timed run with fpdt.bin" 0 $EFIPT timeline "$D" --tsc-hz 1000000000 -o "$TMP/tt.json"
fpdt_events "$TMP/tt.json" >"$TMP/ev"
first=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["otherData"]["tsc_first"])' "$TMP/tt.json")
want=$(python3 -c "import sys; n=100000-$first; print('%d.%03d' % (n // 1000, n % 1000) if n % 1000 else n // 1000)")
contains "timeline: on the trace's clock, less its first TSC ($first)" "$TMP/ev" "B Firmware FPDT: measurements $want StartImage loop.efi"
contains "timeline: the alignment said" "$TMP/ev" "fpdt_time ns since reset less $first ns (the trace's first TSC)"
if [ "$first" -gt 1000 ]; then
	contains "timeline: ResetEnd before the trace's first time left out, said" "$TMP/err" "1 FPDT records end before the trace starts: left out"
fi
pf_same "timeline: timed Perfetto FPDT tracks" "$TMP/tt.json" "$D" --tsc-hz 1000000000
r=$(python3 tests/cli/timeline_check.py "$TMP/tt.json")
[ "$r" = ok ] && ok "timeline: timed FPDT tracks pass the timeline checker" || nok "timeline: timed checker" "$r"
# damaged records: named on stderr, the others drawn
cp "$D2/fpdt.bin" "$D/fpdt.bin"
expect_rc "timeline: damaged FPDT records" 0 $EFIPT timeline "$D" -o "$TMP/td.json"
contains "timeline: damaged record named" "$TMP/err" "offset 734: record type 0x1010, length 3: record length below its 4-byte header: skipped"
fpdt_events "$TMP/td.json" >"$TMP/ev"
contains "timeline: the good records drawn" "$TMP/ev" "B Firmware FPDT: measurements 600 Callback OnReady"
python3 tests/cli/fpdt_gen.py bin "$D/fpdt.bin"

# diff: the records' durations of A and B side by side (B's times doubled)
B=$TMP/runb
cp -r "$D" "$B"
python3 tests/cli/fpdt_gen.py bin "$B/fpdt.bin" --scale 2
expect_rc "diff: two runs with fpdt.bin" 0 $EFIPT diff "$D" "$B"
contains "diff: the section" "$TMP/out" "firmware boot performance records (FPDT; durations, basic boot times since reset; us):"
contains "diff: a StartImage's durations, delta, ratio" "$TMP/out" \
	"       200.000        400.000       +200.000    2.0000          StartImage loop.efi"
contains "diff: a function's" "$TMP/out" "        10.000         20.000        +10.000    2.0000          Function InitThing"
contains "diff: the basic boot record's time to the loader" "$TMP/out" \
	"899.000       1798.000       +899.000    2.0000          basic boot ResetEnd to OsLoaderLoadImageStart (duration)"
contains "diff: ExitBootServices" "$TMP/out" "10.000         20.000        +10.000    2.0000          basic boot ExitBootServices (duration)"
contains "diff: every record changed" "$TMP/out" "12 of 12 records changed"
expect_rc "diff --format jsonl with fpdt.bin" 0 $EFIPT diff "$D" "$B" --format jsonl
contains "diff: jsonl rows" "$TMP/out" '{"type":"fpdt","record":"StartImage loop.efi","a_ns":200000,"b_ns":400000,"delta_ns":200000,"status":"changed"}'
expect_rc "diff: a run against itself" 0 $EFIPT diff "$D" "$D"
contains "diff: no change in the records" "$TMP/out" "no change: 12 records the same"
expect_rc "diff --format csv with fpdt.bin" 0 $EFIPT diff "$D" "$B" --format csv
contains "diff: csv says where the records are" "$TMP/err" "FPDT records are compared in --format text and jsonl"
if grep -q fpdt "$TMP/out"; then nok "diff: csv keeps one table" "$(head -c 300 "$TMP/out")"; else ok "diff: csv keeps one table"; fi
# one side without fpdt.bin: its records are "only A"
rm "$B/fpdt.bin"
expect_rc "diff: B without fpdt.bin" 0 $EFIPT diff "$D" "$B"
contains "diff: B's absence said" "$TMP/out" "B: no fpdt.bin"
contains "diff: A's records only in A" "$TMP/out" "       200.000          0.000       -200.000         -  only A  StartImage loop.efi"
# a damaged record in B: named, skipped, the rest compared
python3 tests/cli/fpdt_gen.py bin "$B/fpdt.bin" --damaged
expect_rc "diff: B with damaged records" 0 $EFIPT diff "$D" "$B"
contains "diff: B's damaged record named" "$TMP/err" "efipt diff: B: $B/fpdt.bin: offset 734: record type 0x1010, length 3"
contains "diff: B's damage counted" "$TMP/out" "B: 6 measurements, basic boot, 2 damaged records skipped"

# info --vs-trace: a measurement of an image beside the image's time in the
# trace ("does it agree with DP?"). The synthesized trace has a TSC packet in
# each PSB+ (TSC = 3 * offset + 1000, a PSB+ every 64 bytes); at 1 GHz (the
# manifest's timing.tsc_hz) loop.efi runs from about 1 us to 9 us after reset.
$EFIPT synth --raw "$D/mem-0000000000001000.bin:0x1000" --start 0x1000 --out "$D/trace.pt" --insns 3000 --tsc --psb-period 64 2>/dev/null
manifest "$D"
sed -i 's/"command":"trace",/"command":"trace","timing":{"tsc_hz":1000000000},/' "$D/manifest.json"
window=$($EFIPT timeline "$D" -o "$TMP/w.json" 2>/dev/null; python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
ts = [e["ts"] for e in d["traceEvents"] if e.get("tid") == 1 and e.get("ph") in "BE"]
print(round(d["otherData"]["tsc_first"] / 1000, 3), round(d["otherData"]["tsc_first"] / 1000 + max(ts), 3))
' "$TMP/w.json")
first=${window% *}
last=${window#* }
python3 tests/cli/fpdt_gen.py bin "$D/fpdt.bin" --a-start 0 --a-end 20000
expect_rc "info --vs-trace" 0 $EFIPT info --vs-trace "$D"
contains "info --vs-trace: the record brackets the image's window" "$TMP/out" "yes: the record brackets it  StartImage loop.efi"
line=$(grep 'StartImage loop.efi' "$TMP/out" | tail -n 1)
set -- $line
# record, trace, rec start, rec end, trace first, trace last
python3 -c "import sys; f, l = float(sys.argv[1]), float(sys.argv[2]); ok = abs(f - $first) < 0.01 and abs(l - $last) < 0.2; sys.exit(0 if ok else 1)" "$5" "$6" \
	&& ok "info --vs-trace: the image's first and last time are the timeline's ($first..$last us)" \
	|| nok "info --vs-trace: the image's window" "$line; the timeline says $first..$last"
[ "$1" = "20.000" ] && [ "$3" = "0.000" ] && [ "$4" = "20.000" ] \
	&& ok "info --vs-trace: the record's duration, start and end" \
	|| nok "info --vs-trace: the record's columns" "$line"
contains "info --vs-trace: the section" "$TMP/out" "FPDT/trace   each measurement of an image beside that image in the trace"
# InitThing is a measurement of GUID B, which no image of the run has
if sed -n '/^FPDT\/trace/,/^ptxed/p' "$TMP/out" | grep -q InitThing; then
	nok "info --vs-trace: only measurements of the run's images" "$(cat "$TMP/out")"
else
	ok "info --vs-trace: only measurements of the run's images"
fi
python3 tests/cli/fpdt_gen.py bin "$D/fpdt.bin"
expect_rc "info --vs-trace: a record after the trace" 0 $EFIPT info --vs-trace "$D"
contains "info --vs-trace: a record that does not hold the image's run" "$TMP/out" "no: outside the record       StartImage loop.efi"
python3 tests/cli/fpdt_gen.py bin "$D/fpdt.bin" --a-start 0 --a-end 5000
expect_rc "info --vs-trace: a record shorter than the image's run" 0 $EFIPT info --vs-trace "$D"
contains "info --vs-trace: the image runs past the record" "$TMP/out" "starts inside, runs past it  StartImage loop.efi"
python3 tests/cli/fpdt_gen.py bin "$D/fpdt.bin" --a-start 5000 --a-end 100000
expect_rc "info --vs-trace: a record that starts after the image's first run" 0 $EFIPT info --vs-trace "$D"
contains "info --vs-trace: the image ran before the record" "$TMP/out" "starts before the record     StartImage loop.efi"
rm "$D/fpdt.bin"
expect_rc "info --vs-trace without fpdt.bin" 1 $EFIPT info --vs-trace "$D"
contains "info --vs-trace without fpdt.bin: said" "$TMP/err" "--vs-trace: the run has no fpdt.bin"
