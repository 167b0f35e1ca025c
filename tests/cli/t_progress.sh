# Progress of a long decode on stderr (host/input/progress.h): EFIPT_PROGRESS=1
# writes a line at each tenth of the trace decoded, from the decoder's PSBs;
# nothing when stderr is not a terminal, or with EFIPT_PROGRESS=0; the
# command's output is the same either way. (The terminal mode, a line
# rewritten in place after the first second on traces of 8 MB or more, is
# the same code on a timer.)
. tests/lib.sh
build_output progress
$EFIPT synth --out "$TMP/t.pt" $PE --insns 300000 --psb-period 256 --seed 3 2>/dev/null

# check NAME CMD ARGS...: the lines, in order, and the output unchanged
check() {
	name=$1
	shift
	EFIPT_PROGRESS=1 $EFIPT "$@" >"$TMP/with" 2>"$TMP/with.err"
	$EFIPT "$@" >"$TMP/without" 2>"$TMP/without.err"
	if python3 - "$TMP/with.err" "efipt $1: t.pt" <<'EOP'
import re, sys
want = sys.argv[2]
pcts = [int(m.group(1)) for m in (re.fullmatch(re.escape(want) + r" (\d+)%", l.rstrip("\n"))
                                   for l in open(sys.argv[1])) if m]
assert len(pcts) >= 5, pcts
assert pcts == sorted(set(pcts)) and all(p % 10 == 0 for p in pcts) and pcts[-1] == 100, pcts
EOP
	then
		ok "$name: a line per tenth, up to 100%"
	else
		nok "$name: a line per tenth, up to 100%" "$(head -3 "$TMP/with.err")"
	fi
	if cmp -s "$TMP/with" "$TMP/without" && [ -s "$TMP/without" ] &&
	   [ "$(grep -v '%$' "$TMP/with.err")" = "$(cat "$TMP/without.err")" ]; then
		ok "$name: the same output, and no progress off a terminal"
	else
		nok "$name: the same output, and no progress off a terminal" "$(diff "$TMP/with.err" "$TMP/without.err" | head -3)"
	fi
}
check "progress: insn --stat" insn --pt "$TMP/t.pt" $PE --stat
check "progress: insn listing" insn --pt "$TMP/t.pt" $PE --no-inst
check "progress: top" top --pt "$TMP/t.pt" $PE --symbols "$SO"
check "progress: coverage" coverage --pt "$TMP/t.pt" $PE --format text
EFIPT_PROGRESS=0 $EFIPT insn --pt "$TMP/t.pt" $PE --stat >/dev/null 2>"$TMP/off.err"
if [ ! -s "$TMP/off.err" ]; then ok "progress: EFIPT_PROGRESS=0 writes nothing"; else nok "progress: EFIPT_PROGRESS=0 writes nothing" "$(head -2 "$TMP/off.err")"; fi
