# efipt diff on two builds of the EDK2 fixture's application, traced for
# real under QEMU with -icount: the committed build (FixtureRun: 8 rounds)
# and tests/data/edk2/Rounds12 (make_fixture.sh --rounds 12: the one change,
# 12 rounds), each traced by efipt.efi under efipt qemu with insnlog.so
# logging every executed instruction beside it. The builds differ in
# code (one byte: the loop bound) but not in addresses (t_diff.sh covers
# that); diff matches by name, each with its own --symbols. Every
# application function's A and B counts, and every image's, must be what the
# logger's records give (functions from the ELF symbols, without efipt); a
# run against itself diffs to "no change"; two runs of one build have every
# application function's own instructions and calls the same, and what differs in the firmware (here,
# under -icount too: DxeCore, CpuDxe, Ps2KeyboardDxe, by all appearances
# code run from timer events; not examined further) is what the logger
# saw; --folded must give efipt flame's counts of each run.
. tests/lib.sh
. tests/qemu/lib_qemu.sh
FIX=tests/data/edk2/Build/EfiptFixture/DEBUG_GCC5
FIXB=tests/data/edk2/Rounds12/Build/EfiptFixture/DEBUG_GCC5
FIXN=tests/data/edk2/NewFunction/Build/EfiptFixture/DEBUG_GCC5
FIXR=tests/data/edk2/RemovedCall/Build/EfiptFixture/DEBUG_GCC5
APP=X64/EfiptFixturePkg/App/FixtureApp/DEBUG
plugin_output "diff edk2"
# trace NAME FIXTURE: the app of that build traced into $TMP/NAME/run, the
# logger's record in $TMP/NAME/log.bin (DIFF_QEMU_DIR instead of $TMP keeps
# them for a look after the test)
W=${DIFF_QEMU_DIR:-$TMP}
# shift=4 (16 ns per instruction): the application's ~1.06e6 instructions
# last 17 ms of virtual time, more than OVMF's 10 ms timer period, so each
# run takes at least one timer interrupt between the markers (the check
# "interrupts apart" needs one); at shift=3 the window was 8.5 ms and a run
# could take none, depending on where in the period the application started
trace() {
	d=$W/$1
	mkdir -p "$d"
	sh ovmf/mkesp.sh --image "$d/esp.img" --add "$2/$APP/FixtureApp.efi:\\EFI\\tools\\FixtureApp.efi" \
		--args 'trace --source qemu --debugcon --shutdown -- \EFI\tools\FixtureApp.efi' >/dev/null
	cp /usr/share/OVMF/OVMF_VARS_4M.fd "$d/vars.fd"
	nice -n 10 timeout --kill-after=5 300 $EFIPT qemu -o "$d/run" --esp "$d/esp.img" --start marker --stop marker -- \
		-machine q35 -m 512 -smp 1 -accel tcg -cpu max -display none -nodefaults -no-reboot -net none \
		-icount shift=4,sleep=off -rtc base=2026-01-01T00:00:00,clock=vm \
		-drive if=pflash,format=raw,unit=0,readonly=on,file="$CODE" \
		-drive if=pflash,format=raw,unit=1,file="$d/vars.fd" \
		-drive format=raw,file="$d/esp.img" -device isa-debug-exit,iobase=0xf4,iosize=0x04 \
		-debugcon file:"$d/debugcon.log" -global isa-debugcon.iobase=0xe9 \
		-plugin "$LOGGER,out=$d/log.bin,from=marker,to=marker" >"$d/out" 2>"$d/err" </dev/null
	rc=$?
	if [ "$rc" -ne 0 ] || ! grep -q "FixtureApp.efi returned EFI_SUCCESS" "$d/debugcon.log"; then
		nok "diff edk2: $1 traced" "exit $rc: $(head -c 400 "$d/err"); $(tail -c 300 "$d/debugcon.log")"
		exit 0
	fi
	ok "diff edk2: $1 traced"
}
if [ ! -f "$FIXB/$APP/FixtureApp.debug" ]; then
	nok "diff edk2: the second build" "$FIXB missing (sh tests/data/edk2/make_fixture.sh --rounds 12)"
	exit 0
fi
trace a "$FIX"
trace b "$FIXB"
trace a2 "$FIX"
trace n "$FIXN"
trace r "$FIXR"
[ "$W" = "$TMP" ] || for r in a b a2 n r; do mkdir -p "$TMP/$r"; cp "$W/$r/log.bin" "$TMP/$r/"; rm -rf "$TMP/$r/run"; cp -r "$W/$r/run" "$TMP/$r/"; done
SA="--symbols $FIX" SB="--symbols-b $FIXB"

# the two builds differ in addresses (else matching by name tests nothing)
if cmp -s "$FIX/$APP/FixtureApp.efi" "$FIXB/$APP/FixtureApp.efi"; then
	nok "diff edk2: the builds differ" "the same .efi"
else
	ok "diff edk2: the builds differ"
fi

# logref A B ELF_A ELF_B FN_CSV IMG_CSV: runs A and B as the logger saw them
# against efipt diff's csv of A and B, by function and by image
# (tests/qemu/diff_logref.py); prints the application's functions that changed
logref() {
	python3 tests/qemu/diff_logref.py counts "$TMP" "$@" >"$TMP/cmp" 2>&1
}
APPA=$FIX/$APP/FixtureApp.debug APPB=$FIXB/$APP/FixtureApp.debug
$EFIPT diff "$TMP/a/run" "$TMP/b/run" $SA $SB --format csv >"$TMP/fn.csv" 2>"$TMP/err"
$EFIPT diff "$TMP/a/run" "$TMP/b/run" $SA $SB --format csv --by image >"$TMP/img.csv" 2>>"$TMP/err"
if logref a b "$APPA" "$APPB" "$TMP/fn.csv" "$TMP/img.csv"; then
	ok "diff edk2: 8 -> 12 rounds: every image's and app function's counts are the logger's ($(cat "$TMP/cmp"))"
else
	nok "diff edk2: 8 -> 12 rounds: every image's and app function's counts are the logger's" "$(tail -c 700 "$TMP/cmp") $(head -c 300 "$TMP/err")"
fi
for f in FixtureRun FixtureChecksum FixtureDouble; do
	grep -q "\"FixtureApp\",\"$f\",.*,changed,code\$" "$TMP/fn.csv" && ok "diff edk2: $f changed" ||
		nok "diff edk2: $f changed" "$(grep "$f" "$TMP/fn.csv")"
done
grep -q '"FixtureApp","FixtureFib",.*,same,code$' "$TMP/fn.csv" && ok "diff edk2: FixtureFib the same" ||
	nok "diff edk2: FixtureFib the same" "$(grep FixtureFib "$TMP/fn.csv")"

# the other two changes: a new function (FixtureNew, called once) and a
# removed call (FixtureFib (10) replaced by its value): every count is the
# logger's, and the application functions diff says changed are exactly
# those whose instructions the logger saw change, the one named among them
for v in "n $FIXN FixtureNew only B" "r $FIXR FixtureFib only A"; do
	set -- $v
	$EFIPT diff "$TMP/a/run" "$TMP/$1/run" $SA --symbols-b "$2" --format csv >"$TMP/fn$1.csv" 2>"$TMP/err"
	$EFIPT diff "$TMP/a/run" "$TMP/$1/run" $SA --symbols-b "$2" --format csv --by image >"$TMP/img$1.csv" 2>>"$TMP/err"
	if logref a $1 "$APPA" "$2/$APP/FixtureApp.debug" "$TMP/fn$1.csv" "$TMP/img$1.csv" &&
		python3 - "$TMP/cmp" "$TMP/fn$1.csv" "$3" "$4 $5" >>"$TMP/cmp" 2>&1 <<'EOP'
import csv, sys
cmp, fn_csv, name, status = sys.argv[1:5]
app = open(cmp).read().split(";")[0]
assert app.startswith("app: ") and app != "app: no change", app
logged = {e.split()[0]: int(e.split()[1]) for e in app[5:].split(", ")}
rows = [r for r in csv.DictReader(open(fn_csv)) if r["image"] == "FixtureApp" and r["status"] != "same"]
# a function whose own instructions are the same can still be "changed" by
# what it calls: firmware event notifications run when a callee lowers the
# TPL, so where the timer's work lands varies from run to run
own = [r for r in rows if int(r["delta_excl"]) != 0 or r["status"].startswith("only")]
for r in rows:
    if r not in own and r["delta_incl"] == "0" and r["a_calls"] == r["b_calls"]:
        sys.exit("%s is changed but its counts and calls are not" % r["function"])
diffed = {r["function"]: int(r["delta_excl"]) for r in own}
if diffed != logged:
    sys.exit("own instructions changed: diff %s, logger %s" % (diffed, logged))
if not any(r["function"] == name and r["status"] == status for r in rows):
    sys.exit("%s not %s in %s" % (name, status, [(r["function"], r["status"]) for r in rows]))
EOP
	then
		ok "diff edk2: $3 ($4 $5): the changed functions and deltas are the logger's ($(head -1 "$TMP/cmp"))"
	else
		nok "diff edk2: $3 ($4 $5): the changed functions and deltas are the logger's" "$(tail -c 700 "$TMP/cmp") $(head -c 300 "$TMP/err")"
	fi
done

# interrupts: each run took its timer interrupt(s) between the markers; what
# they ran is in the interrupt rows (the timer driver's code only there), and
# those add up to the header's count
$EFIPT diff "$TMP/a/run" "$TMP/b/run" $SA $SB --by image --format jsonl >"$TMP/irq.jsonl" 2>"$TMP/err"
if python3 - "$TMP/irq.jsonl" >"$TMP/cmp" 2>&1 <<'EOP'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
s = rows[0]
# each failure on one line: the summary of a test run shows the first
for side in ("a", "b"):
    n = sum(r[side + "_insns"] for r in rows[1:] if r["context"] == "interrupt")
    if s[side]["interrupts"] == 0:
        sys.exit("%s: no interrupt between the markers: %s" % (side, s[side]))
    if n != s[side]["interrupt_insns"] or n == 0:
        sys.exit("%s: interrupt rows sum to %d, the header says %d" % (side, n, s[side]["interrupt_insns"]))
# the timer driver's code runs in interrupts: it has an interrupt row with
# instructions in each run. A code row too is allowed: the plugin infers
# events from the blocks run, and takes a timer interrupt that strikes right
# after a RET or an indirect JMP/CALL for that branch's target (docs/qemu.md,
# "What the plugin sees, and what it cannot"); where the interrupt strikes
# varies with what ran before the application
timer = {r["context"]: r for r in rows[1:] if r["image"] == "LocalApicTimerDxe"}
if "interrupt" not in timer or not (timer["interrupt"]["a_insns"] > 0 and timer["interrupt"]["b_insns"] > 0):
    sys.exit("the timer driver's rows: %s" % list(timer.values()))
print("%d and %d instructions in %d and %d interrupts" % (s["a"]["interrupt_insns"], s["b"]["interrupt_insns"], s["a"]["interrupts"], s["b"]["interrupts"]))
EOP
then ok "diff edk2: interrupts apart ($(cat "$TMP/cmp"))"; else nok "diff edk2: interrupts apart" "$(tail -c 500 "$TMP/cmp")"; fi

# a run against itself: no change
expect_rc "diff edk2: a run against itself" 0 $EFIPT diff "$TMP/a/run" "$TMP/a/run" $SA --fail-if-grows 0 --fail-if-new
contains "diff edk2: a run against itself: no change" "$TMP/out" "no change: the same instructions in each of"
# one build traced twice: the application ran the same; the firmware's
# timer-driven code may not have (what differs, the logger saw too)
$EFIPT diff "$TMP/a/run" "$TMP/a2/run" $SA --format csv >"$TMP/fn2.csv" 2>"$TMP/err"
$EFIPT diff "$TMP/a/run" "$TMP/a2/run" $SA --format csv --by image >"$TMP/img2.csv" 2>>"$TMP/err"
if logref a a2 "$APPA" "$APPA" "$TMP/fn2.csv" "$TMP/img2.csv" && grep -q "^app: no change;" "$TMP/cmp"; then
	ok "diff edk2: one build, two runs: the app the same, counts are the logger's ($(cat "$TMP/cmp"))"
else
	nok "diff edk2: one build, two runs: the app the same, counts are the logger's" "$(tail -c 700 "$TMP/cmp")"
fi
# (exclusive counts and calls; an inclusive count takes in the timer
# event notifications a callee that lowers the TPL runs, which vary)
if python3 - "$TMP/fn2.csv" >"$TMP/cmp" 2>&1 <<'EOP'
import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["image"] == "FixtureApp"]
if len(rows) <= 5:
    sys.exit("only %d app functions" % len(rows))
for r in rows:
    if r["context"] != "code" or r["delta_excl"] != "0" or r["a_calls"] != r["b_calls"]:
        sys.exit("%s differs: %s" % (r["function"], r))
print("%d functions, %d with the same inclusive count" % (len(rows), sum(r["delta_incl"] == "0" for r in rows)))
EOP
then
	ok "diff edk2: one build, two runs: every app function the same (exclusive, calls: $(cat "$TMP/cmp"))"
else
	nok "diff edk2: one build, two runs: every app function the same (exclusive, calls)" "$(cat "$TMP/cmp")"
fi
expect_rc "diff edk2: one build, two runs: --image FixtureApp --fail-if-grows 0" 0 $EFIPT diff "$TMP/a/run" "$TMP/a2/run" $SA --fail-if-grows 0 --image FixtureApp
# the gates on the real change
expect_rc "diff edk2: --function FixtureRun --fail-if-grows 1" 3 $EFIPT diff "$TMP/a/run" "$TMP/b/run" $SA $SB --fail-if-grows 1 --function FixtureRun
contains "diff edk2: FixtureRun's growth named" "$TMP/err" "FixtureApp\`FixtureRun grew by +"
expect_rc "diff edk2: --function FixtureFib --fail-if-grows 0" 0 $EFIPT diff "$TMP/a/run" "$TMP/b/run" $SA $SB --fail-if-grows 0 --function FixtureFib
# B without symbols for the application: not compared by function
mkdir -p "$TMP/nosym"
expect_rc "diff edk2: B without the app's symbols refused" 2 $EFIPT diff "$TMP/a/run" "$TMP/b/run" $SA --symbols-b "$TMP/nosym"
contains "diff edk2: the image without symbols named" "$TMP/err" "image FixtureApp ran in both runs but has symbols in A only"
expect_rc "diff edk2: ... compared by image" 0 $EFIPT diff "$TMP/a/run" "$TMP/b/run" $SA --symbols-b "$TMP/nosym" --by image

# windows: --from F --to G counts from the first instruction executed in F
# to the first in G after it, in each run; the logger's records cut at the
# same two places give every application function's instructions (the
# last window closes where FixtureDouble returns into its caller)
# winref A B ELF_A ELF_B FROM TO FN_CSV
winref() {
	python3 tests/qemu/diff_logref.py window "$TMP" "$@" >"$TMP/cmp" 2>&1
}
for w in "FixtureRun FixtureFib" "FixtureChecksum FixtureFib" "FixtureDouble FixtureRun"; do
	set -- $w
	$EFIPT diff "$TMP/a/run" "$TMP/b/run" $SA $SB --from $1 --to $2 --format csv >"$TMP/w.csv" 2>"$TMP/err"
	$EFIPT diff "$TMP/a/run" "$TMP/b/run" $SA $SB --from $1 --to $2 >"$TMP/w.txt" 2>>"$TMP/err"
	if winref a b "$APPA" "$APPB" $1 $2 "$TMP/w.csv" &&
		t=$(sed -n 's/^totals \([0-9]*\) \([0-9]*\)$/\1 \2/p' "$TMP/cmp") && set -- $t &&
		grep -q "^instructions (the code's own): A $1, B $2," "$TMP/w.txt"; then
		ok "diff edk2: window --from $w: the logger's counts ($(head -1 "$TMP/cmp"))"
	else
		nok "diff edk2: window --from $w: the logger's counts" "$(tail -c 600 "$TMP/cmp") $(head -c 300 "$TMP/err") $(grep '^instructions' "$TMP/w.txt")"
	fi
done
expect_rc "diff edk2: a window whose function never ran" 2 $EFIPT diff "$TMP/a/run" "$TMP/b/run" $SA $SB --from FixtureNone
contains "diff edk2: the window's function named" "$TMP/err" "efipt diff: A: --from FixtureNone never ran"
expect_rc "diff edk2: a window that never closes" 2 $EFIPT diff "$TMP/a/run" "$TMP/b/run" $SA $SB --from FixtureFib --to FixtureRun
contains "diff edk2: the window's end named" "$TMP/err" "--to FixtureRun never ran after --from"

# differential folded stacks: efipt flame's counts of each run
expect_rc "diff edk2: --folded" 0 $EFIPT diff "$TMP/a/run" "$TMP/b/run" $SA $SB --folded
cp "$TMP/out" "$TMP/folded"
$EFIPT flame "$TMP/a/run" --symbols "$FIX" >"$TMP/fa" 2>/dev/null
$EFIPT flame "$TMP/b/run" --symbols "$FIXB" >"$TMP/fb" 2>/dev/null
if python3 tests/cli/diff_folded_check.py "$TMP/folded" "$TMP/fa" "$TMP/fb" 2>"$TMP/cmp"
then ok "diff edk2: --folded counts are flame's of A and of B"; else nok "diff edk2: --folded counts are flame's of A and of B" "$(cat "$TMP/cmp")"; fi
