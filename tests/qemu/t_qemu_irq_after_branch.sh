# Interrupts that strike right after a RET or an indirect CALL (QEMU 9.2
# on: plugin API 4): by the order of blocks alone, the handler looks like
# the branch's target; the plugin reads the event's frame at a handler's
# entry and traces the branch to where it went and the event there
# (docs/qemu.md). A UEFI app (tests/qemu/ret_app.c) calls a tiny function
# through a pointer 200000 times between the trace markers under -icount
# shift=8, so the firmware's timer strikes there dozens of times, many of
# them right after a RET or the CALL. Every entry into a handler is an
# interrupt the decoder sees, each with its record in interrupts.jsonl, and
# the decoded instructions are the logging plugin's.
. tests/lib.sh
. tests/qemu/lib_qemu.sh

plugin_output "irq after branch"
need_api4 "irq after branch" "docs/qemu.md: the handler is taken for the branch's target"
d=$TMP/ret
TRACE_TIMEOUT=600 TRACE_EXTRA="-icount shift=8,sleep=off"
marker_app_trace "irq after branch" "$d" build/tests/ret_app.efi
decoded_equals_log "irq after branch" "$d" "start marker to stop marker"
$EFIPT insn --run "$d/run" >"$d/text.txt" 2>"$d/err"
# every instruction at a handler's entry comes right after an interrupt
# event, and the events are the records, one for one
if python3 - "$d/run" "$d/text.txt" >"$d/check" 2>&1 <<'EOP'
import json, sys
run, listing = sys.argv[1:3]
recs = [json.loads(l) for l in open(run + "/interrupts.jsonl")]
m = json.load(open(run + "/manifest.json"))["trace"]["interrupts"]
handlers = {int(r["handler"], 16) for r in recs}
after_event, entries, events, bad, n = False, 0, 0, [], 0
for l in open(listing):
    if l.startswith("[paging"):
        continue  # a PIP with the event (Table 33-55: FUP, PIP, TIP)
    if l.startswith("["):
        after_event = l.startswith("[interrupt")
        events += after_event
        continue
    n += 1
    if int(l.split()[0], 16) in handlers:
        entries += 1
        if not after_event:
            bad.append(n)
    after_event = False
if len(recs) < 20:
    sys.exit("only %d interrupts in the loop" % len(recs))
if bad:
    sys.exit("%d of %d handler entries not after an interrupt, the first at instruction %d"
             % (len(bad), entries, bad[0]))
if not (entries == events == len(recs) == m["records"]):
    sys.exit("%d entries, %d events, %d records, manifest %s" % (entries, events, len(recs), m))
if not m["after_branch"] > 0:
    sys.exit("no interrupt struck right after a branch: %s" % m)
print("%d interrupts, %d of them right after a RET, CALL or Jcc" % (len(recs), m["after_branch"]))
EOP
then
	ok "irq after branch: every handler entry is an interrupt ($(cat "$d/check"))"
else
	nok "irq after branch: every handler entry is an interrupt" "$(cat "$d/check")"
fi
