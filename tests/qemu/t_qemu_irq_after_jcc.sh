# Interrupts that strike right after a conditional branch (QEMU 9.2 on:
# plugin API 4): by the order of blocks alone the plugin cannot tell whether
# the Jcc was taken (the handler runs next); the event's stack frame holds
# the IP the CPU resumes at, which says it (docs/qemu.md). A UEFI app
# (tests/qemu/jcc_app.c) runs a loop of Jccs, half of them taken, between
# the trace markers under -icount shift=8, so the firmware's timer strikes
# there dozens of times, each right after a Jcc. The decoded instructions
# must be the logging plugin's, and every interrupt in the loop must be
# traced where execution resumed after it (its FUP IP): the target of a
# taken Jcc, the next instruction of one not taken. (Before API 4 a taken
# one is written as not taken, with the FUP at its next instruction.)
. tests/lib.sh
. tests/qemu/lib_qemu.sh

plugin_output "irq after jcc"
need_api4 "irq after jcc" "docs/qemu.md: the Jcc's outcome before an event is inferred"
d=$TMP/jcc
TRACE_TIMEOUT=600 TRACE_EXTRA="-icount shift=8,sleep=off"
marker_app_trace "irq after jcc" "$d" build/tests/jcc_app.efi
decoded_equals_log "irq after jcc" "$d" "start marker to stop marker"
$EFIPT insn --run "$d/run" >"$d/text.txt" 2>"$d/err"
if python3 - "$d/run" "$d/text.txt" >"$d/check" 2>&1 <<'EOP'
import json, sys
run, listing = sys.argv[1:3]
recs = [json.loads(l) for l in open(run + "/interrupts.jsonl")]
m = json.load(open(run + "/manifest.json"))["trace"]["interrupts"]
ips, jcc, events = [], [], []  # instructions; for each event, the index of the next one
for l in open(listing):
    if l.startswith("[interrupt"):
        events.append(len(ips))
    elif not l.startswith("[") and l.strip():
        f = l.split()
        ips.append(int(f[0], 16))
        jcc.append(len(f) > 1 and f[1].startswith("j") and f[1] != "jmp")
if len(events) != len(recs):
    sys.exit("%d events, %d records" % (len(events), len(recs)))
# the loop: the instructions before the first event that ran again (the
# marker and the MOV before the loop ran once), 8 of them
runs = {}
for ip in ips:
    runs[ip] = runs.get(ip, 0) + 1
loop = {ip for ip in (ips[:events[0]] if events else []) if runs[ip] > 1}
checked, taken, after_jcc, bad = 0, 0, 0, []
for k, r in zip(events, recs):
    fup = int(r["ip"], 16)
    if fup not in loop:
        continue
    # where execution went on in the loop after the handler
    resumed = next((ip for ip in ips[k:] if ip in loop), None)
    if resumed is None:
        continue
    checked += 1
    prev = ips[k - 1]
    after_jcc += jcc[k - 1]  # (-icount may also end a block elsewhere)
    taken += fup != next((ip for ip in sorted(loop) if ip > prev), None)
    if resumed != fup:
        bad.append("FUP 0x%x, resumed at 0x%x (after 0x%x)" % (fup, resumed, prev))
if len(loop) != 8:
    sys.exit("the loop has %d instructions, not 8: %s" % (len(loop), sorted(map(hex, loop))))
if checked < 10:
    sys.exit("only %d interrupts in the loop" % checked)
if bad:
    sys.exit("%d of %d interrupts not where execution resumed: %s" % (len(bad), checked, bad[0]))
if not taken or not m["after_branch"] >= after_jcc > taken:
    sys.exit("%d after a Jcc, %d of them taken, after_branch %s, %d checked"
             % (after_jcc, taken, m.get("after_branch"), checked))
print("%d interrupts in the loop, %d right after a Jcc, %d of them taken; after_branch %d"
      % (checked, after_jcc, taken, m["after_branch"]))
EOP
then
	ok "irq after jcc: every interrupt in the loop traced where execution resumed ($(cat "$d/check"))"
else
	nok "irq after jcc: every interrupt in the loop traced where execution resumed" "$(cat "$d/check")"
fi
