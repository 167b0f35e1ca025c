# A decode error is named by every command that decodes a trace: how many,
# the first with its trace offset, IP and what went wrong, and exit 1 (the
# output is of what decoded). A byte that is no packet is put into a
# synthesized trace of efipt.efi at a known offset.
. tests/lib.sh
EFI=build/efipt.efi
$EFIPT synth --pe $EFI --out "$TMP/g.pt" --truth "$TMP/g.truth" --insns 20000 --seed 4 2>/dev/null
$EFIPT packets --format jsonl "$TMP/g.pt" >"$TMP/g.jsonl"
off=$(python3 - "$TMP/g.pt" "$TMP/g.jsonl" "$TMP/err.pt" <<'PY'
import json, sys
d = open(sys.argv[1], "rb").read()
off = [p["off"] for p in map(json.loads, open(sys.argv[2])) if p["type"].startswith("tnt") and p["off"] > 0x100][0]
open(sys.argv[3], "wb").write(d[:off] + b"\xd9" + d[off:])  # d9: no packet's opcode
print("0x%x" % off)
PY
)
want="err.pt: 1 decode error (decoding goes on at the next PSB after each); the first at trace offset $off, ip 0x"
# named COMMAND ARGS...: exit 1, and the first error named on stderr
named() {
	cmd=$1
	shift
	expect_rc "$cmd: a decode error: exit 1" 1 $EFIPT "$cmd" "$@"
	if grep -qF -- "$want" "$TMP/err" && grep -q ": unknown opcode" "$TMP/err"; then
		ok "$cmd: the decode error named (offset $off)"
	else
		nok "$cmd: the decode error named" "stderr: $(head -c 400 "$TMP/err")"
	fi
}
named top --pt "$TMP/err.pt" --pe $EFI
contains "top: its header counts the decode error" "$TMP/out" "gaps (1 decode error)"
named flame --pt "$TMP/err.pt" --pe $EFI
named calls --pt "$TMP/err.pt" --pe $EFI
named timeline --pt "$TMP/err.pt" --pe $EFI -o "$TMP/tl.json"
named coverage --pt "$TMP/err.pt" --pe $EFI --format json
named coverage --pt "$TMP/err.pt" --pe $EFI --symbols build/efipt.so --format lcov -o "$TMP/e.info"
named insn --pt "$TMP/err.pt" --pe $EFI --stat
# insn's listing and decode's summary name it in their output
expect_rc "insn: the listing names the error" 1 $EFIPT insn --pt "$TMP/err.pt" --pe $EFI --no-inst
contains "insn: the error line" "$TMP/out" "[$(printf '%x' "$off"), "

# An empty trace is no result: every decoding command says so and writes
# nothing (an empty listing, table or file would look like one)
: >"$TMP/empty.pt"
for c in "insn --stat" decode top flame calls "timeline -o $TMP/empty.json" \
	"coverage -o $TMP/empty.drcov" "coverage --symbols build/efipt.so -o $TMP/empty.info"; do
	# shellcheck disable=SC2086
	$EFIPT $c --pt "$TMP/empty.pt" --pe $EFI >"$TMP/out" 2>"$TMP/err"
	rc=$?
	name=${c%% -*}
	if [ "$rc" -ne 0 ] && [ ! -s "$TMP/out" ] && grep -q "empty.pt: the trace is empty (0 bytes): nothing to decode" "$TMP/err"; then
		ok "$name: an empty trace: said, exit $rc, nothing written"
	else
		nok "$name: an empty trace: said, nothing written" "exit $rc, $(wc -c <"$TMP/out") bytes out, stderr: $(head -c 300 "$TMP/err")"
	fi
done
if [ ! -e "$TMP/empty.json" ] && [ ! -e "$TMP/empty.drcov" ] && [ ! -e "$TMP/empty.info" ]; then
	ok "an empty trace: no timeline, drcov or lcov file written"
else
	nok "an empty trace: no timeline, drcov or lcov file written" "$(ls "$TMP"/empty.*)"
fi
$EFIPT insn --stat --pt - --pe $EFI <"$TMP/empty.pt" >"$TMP/out" 2>"$TMP/err"
contains "insn --pt -: an empty standard input said" "$TMP/err" "<stdin>: the trace is empty (0 bytes): nothing to decode"
