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
