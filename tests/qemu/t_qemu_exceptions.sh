# Exceptions the firmware handles and returns from, traced by the plugin:
# a UEFI app (tests/qemu/exc_app.c) installs #BP and #UD handlers through
# the CPU architectural protocol and runs INT3 and UD2 five times each
# between the trace markers. The decoded instructions are the logging
# plugin's (neither INT3 nor the faulting UD2 retires: docs/qemu.md, the
# table of packets), every exception is an event of the trace, and with
# plugin API 4 (QEMU 9.2 on) interrupts.jsonl gives each its vector and
# efipt calls and timeline name them: "#BP breakpoint", "#UD invalid opcode".
. tests/lib.sh
. tests/qemu/lib_qemu.sh

plugin_output "exceptions"
d=$TMP/exc
TRACE_TIMEOUT=400
marker_app_trace "exceptions" "$d" build/tests/exc_app.efi
decoded_equals_log "exceptions" "$d" "start marker to stop marker, through 10 exceptions" --events
# each INT3 and UD2 raised its event: the app's handlers ran for each
expect "exceptions: 10 INT3 and UD2 raised their events" grep -q '^10 instructions raised their own events' "$d/cmp.txt"
need_api4 "exceptions" "the vectors are read from the IDT"
if python3 - "$d/run" >"$d/vec.txt" 2>&1 <<'EOP'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1] + "/interrupts.jsonl")]
vec = [r["vector"] for r in recs if r["vector"] in (3, 6)]
if vec != [3, 6] * 5:
    sys.exit("records: %s" % [(r["vector"], r.get("why")) for r in recs][:14])
EOP
then ok "exceptions: 10 records with their vectors, in the app's order"; else nok "exceptions: 10 records with their vectors, in the app's order" "$(cat "$d/vec.txt")"; fi
expect_rc "exceptions: efipt calls reads them" 0 $EFIPT calls "$d/run" --index
expect "exceptions: efipt calls names #BP and #UD" python3 -c "
lines = open('$TMP/out').read().splitlines()
k = lambda s: sum(1 for l in lines if l.endswith(s))
assert k('(#BP breakpoint, vector 0x03)') == 5, [l for l in lines if 'vector' in l][:12]
assert k('(#UD invalid opcode, vector 0x06)') == 5, [l for l in lines if 'vector' in l][:12]"
expect_rc "exceptions: efipt timeline reads them" 0 $EFIPT timeline "$d/run" -o "$d/tl.json"
expect "exceptions: the timeline's instants are named by vector" python3 -c "
import json
ev = json.load(open('$d/tl.json'))['traceEvents']
names = [e['name'] for e in ev if e.get('ph') in ('i', 'I')]
assert names.count('#BP breakpoint, vector 0x03') == 5 and names.count('#UD invalid opcode, vector 0x06') == 5, names"
