# efipt packets: text and jsonl output, options, errors and resync, chunked
# reading of large traces. Traces are hand-assembled from the SDM packet
# tables (33.4.2) by tests/cli/packets_gen.py.
. tests/lib.sh
GEN="python3 tests/cli/packets_gen.py"

$GEN all >"$TMP/all.pt"
expect_rc "packets: text" 0 $EFIPT packets "$TMP/all.pt"
cp "$TMP/out" "$TMP/all.txt"
contains "packets: psb line" "$TMP/all.txt" "0000000000000000  psb"
contains "packets: tnt bits oldest first" "$TMP/all.txt" "tnt.8     !.!.!."
contains "packets: long tnt" "$TMP/all.txt" "tnt.64    !......!"
contains "packets: tip ipc3" "$TMP/all.txt" "tip.pge   3: 0x7fff00001000"
contains "packets: suppressed ip" "$TMP/all.txt" "tip.pgd   0: ip suppressed"
contains "packets: pip" "$TMP/all.txt" "pip       cr3=0xfedcba9876fe0, nr"
contains "packets: mode.exec" "$TMP/all.txt" "mode.exec cs.l, if"
contains "packets: ptw" "$TMP/all.txt" "ptw       8: 0x0807060504030201, ip"
contains "packets: bip in block" "$TMP/all.txt" "bip       id=0x01 0x04030201"
contains "packets: cyc" "$TMP/all.txt" "cyc       0x20"
if grep -q error "$TMP/all.txt"; then nok "packets: no errors on a valid trace" "$(grep error "$TMP/all.txt")"; else ok "packets: no errors on a valid trace"; fi

expect_rc "packets: jsonl" 0 $EFIPT packets --format jsonl --lastip "$TMP/all.pt"
cp "$TMP/out" "$TMP/all.jsonl"
expect "packets: jsonl contract (names, fields, types, contiguous offsets)" \
	$GEN check-jsonl "$TMP/all.jsonl" "$TMP/all.pt" lastip
expect "packets: jsonl has every packet type" $GEN check-types "$TMP/all.jsonl"
contains "packets: jsonl lastip" "$TMP/all.jsonl" '"type":"tip","ipc":1,"ip":"0x1234","lastip":"0x7fff00001234"'
contains "packets: jsonl tnt" "$TMP/all.jsonl" '"type":"tnt.8","bits":"!.!.!."'
contains "packets: jsonl tma" "$TMP/all.jsonl" '"type":"tma","ctc":4660,"fc":511'
contains "packets: jsonl tsc is hex" "$TMP/all.jsonl" '"type":"tsc","tsc":"0x7060504030201"'
contains "packets: jsonl pwre" "$TMP/all.jsonl" '"type":"pwre","state":6,"sub":2,"hw":true'
contains "packets: jsonl cfe" "$TMP/all.jsonl" '"type":"cfe","subtype":1,"vector":14,"ip":true'

expect_rc "packets: jsonl without lastip" 0 $EFIPT packets --format jsonl "$TMP/all.pt"
if grep -q lastip "$TMP/out"; then nok "packets: lastip only with --lastip" "found lastip"; else ok "packets: lastip only with --lastip"; fi

expect_rc "packets: --no-pad --no-timing --no-offset" 0 $EFIPT packets --no-pad --no-timing --no-offset "$TMP/all.pt"
if grep -qE '^(pad|tsc|tma|mtc|cyc|cbr) ' "$TMP/out"; then nok "packets: filters drop pad and timing" "$(head -3 "$TMP/out")"; else ok "packets: filters drop pad and timing"; fi
contains "packets: no offset column" "$TMP/out" "psb"
if grep -q '^0000' "$TMP/out"; then nok "packets: --no-offset" "offset printed"; else ok "packets: --no-offset"; fi

expect_rc "packets: stdin" 0 sh -c "$EFIPT packets --format jsonl - <'$TMP/all.pt'"
if $EFIPT packets --format jsonl "$TMP/all.pt" | cmp -s - "$TMP/out"; then
	ok "packets: stdin same as file"; else nok "packets: stdin same as file" "differs"; fi

expect_rc "packets: --stat" 0 $EFIPT packets --stat "$TMP/all.pt"
expect "packets: --stat counts every byte" $GEN check-stat "$TMP/out" "$TMP/all.pt"

# --sync-offset: start at a packet boundary that is not a PSB.
off=$(python3 -c "import json;print([json.loads(l)['off'] for l in open('$TMP/all.jsonl') if json.loads(l)['type']=='tip'][0])")
expect_rc "packets: --sync-offset" 0 $EFIPT packets --format jsonl --sync-offset "$off" "$TMP/all.pt"
first=$(head -n 1 "$TMP/out")
case "$first" in *"\"off\":$off,"*'"type":"tip"'*) ok "packets: --sync-offset starts there" ;;
*) nok "packets: --sync-offset starts there" "$first" ;; esac
expect_rc "packets: --sync-offset beyond the end" 2 $EFIPT packets --sync-offset 99999999 "$TMP/all.pt"

# Errors: a bad packet is reported with its offset, decoding resumes at the
# next PSB; a packet cut at the end is reported too.
$GEN errors >"$TMP/err.pt"
expect_rc "packets: errors exit 1" 1 $EFIPT packets --format jsonl "$TMP/err.pt"
cp "$TMP/out" "$TMP/err.jsonl"
contains "packets: bad opcode reported" "$TMP/err.jsonl" '{"off":20,"type":"error","msg":"unknown opcode"}'
contains "packets: resync at next PSB" "$TMP/err.jsonl" '{"off":40,"size":16,"type":"psb"}'
contains "packets: reserved ipbytes is a bad packet" "$TMP/err.jsonl" '{"off":58,"type":"error","msg":"bad packet payload"}'
contains "packets: truncated tail reported" "$TMP/err.jsonl" '"type":"error","msg":"truncated packet (need more bytes)"'
expect "packets: error jsonl parses" $GEN check-jsonl "$TMP/err.jsonl" "$TMP/err.pt" errors
expect_rc "packets: errors --stat" 1 $EFIPT packets --stat "$TMP/err.pt"
expect "packets: errors --stat accounts every byte" $GEN check-stat "$TMP/out" "$TMP/err.pt"

# Large trace: packets straddle the 1 MiB read windows; output matches the
# generator's own list of packets, and memory stays bounded.
$GEN big 3000000 >"$TMP/big.pt" 2>"$TMP/big.expect"
expect_rc "packets: big trace jsonl" 0 $EFIPT packets --format jsonl "$TMP/big.pt"
expect "packets: big trace packets straddling windows" $GEN compare "$TMP/out" "$TMP/big.expect"
cp "$TMP/out" "$TMP/big.jsonl"
expect_rc "packets: big trace --stat" 0 $EFIPT packets --stat "$TMP/big.pt"
expect "packets: big trace --stat counts equal the listed packets" $GEN stat-vs-jsonl "$TMP/out" "$TMP/big.jsonl"
expect_rc "packets: big trace from stdin" 0 sh -c "cat '$TMP/big.pt' | $EFIPT packets --format jsonl -"
expect "packets: big trace from a pipe" $GEN compare "$TMP/out" "$TMP/big.expect"
for i in 1 2 3 4 5 6 7 8; do cat "$TMP/big.pt"; done >"$TMP/huge.pt"
expect "packets: memory bounded on a 24 MB trace (--stat)" $GEN maxrss 20000 $EFIPT packets --stat "$TMP/huge.pt"
expect "packets: memory bounded on a 24 MB trace (jsonl)" $GEN maxrss 20000 $EFIPT packets --format jsonl "$TMP/huge.pt"

# No PSB, empty input, bad usage.
head -c 1000 /dev/zero >"$TMP/zero.pt"
expect_rc "packets: no PSB" 1 $EFIPT packets "$TMP/zero.pt"
contains "packets: no PSB message" "$TMP/err" "no PSB found"
: >"$TMP/empty.pt"
expect_rc "packets: an empty trace is no result: exit 1" 1 $EFIPT packets "$TMP/empty.pt"
contains "packets: an empty trace said" "$TMP/err" "empty.pt: the trace is empty (0 bytes): nothing to list"
head -c 300000 /dev/urandom >"$TMP/random.pt"
expect_rc "packets: random bytes do not crash" 1 $EFIPT packets --format jsonl "$TMP/random.pt"
expect_rc "packets: directory without trace.pt" 2 $EFIPT packets "$TMP"
contains "packets: directory without trace.pt named" "$TMP/err" "a directory without trace.pt"
mkdir -p "$TMP/run" && cp "$TMP/all.pt" "$TMP/run/trace.pt"
$EFIPT packets "$TMP/all.pt" >"$TMP/direct.txt" 2>/dev/null
expect_rc "packets: run directory reads its trace.pt" 0 $EFIPT packets "$TMP/run"
if cmp -s "$TMP/out" "$TMP/direct.txt"; then ok "packets: run directory output equals the file's"; else nok "packets: run directory output equals the file's" "differs"; fi
expect_rc "packets: missing file" 2 $EFIPT packets "$TMP/nope.pt"
contains "packets: missing file named" "$TMP/err" "nope.pt: No such file or directory"
expect_rc "packets: bad format" 2 $EFIPT packets --format xml "$TMP/all.pt"
expect_rc "packets: no trace" 2 $EFIPT packets
expect_rc "packets: help" 0 $EFIPT packets --help
contains "packets: help text" "$TMP/out" "usage: efipt packets [OPTIONS] TRACE"

# the documents the help and the docs point to exist in the repository
missing=
for c in packets plan insn decode info synth caps; do
	for f in $($EFIPT $c --help | grep -o '[A-Za-z_/.-]*\.md' | sort -u); do
		[ -f "$f" ] || missing="$missing $c--help:$f"
	done
done
for d in README.md docs/*.md; do
	for f in $(grep -o '[A-Za-z_/-]*[A-Z_a-z]\.md' "$d" | sort -u); do
		[ -f "$f" ] || [ -f "docs/$f" ] || missing="$missing $d:$f"
	done
done
[ -z "$missing" ] && ok "help and docs refer to existing documents" || nok "help and docs refer to existing documents" "$missing"
mkdir -p "$TMP/dirrun/trace.pt"
expect_rc "packets: trace.pt a directory" 2 $EFIPT packets "$TMP/dirrun"
contains "packets: trace.pt a directory named" "$TMP/err" "trace.pt: a directory, not a regular file"
# a write error is reported once, with its cause
printf '\002\202\002\202\002\202\002\202\002\202\002\202\002\202\002\202\002\043' >"$TMP/psb.pt"
$EFIPT packets "$TMP/psb.pt" >/dev/full 2>"$TMP/err"
rc=$?
[ "$rc" -eq 2 ] && ok "packets: /dev/full exits 2" || nok "packets: /dev/full exits 2" "exit $rc"
[ "$(wc -l <"$TMP/err")" -eq 1 ] && ok "packets: one write error message" || nok "packets: one write error message" "$(cat "$TMP/err")"
contains "packets: write error cause" "$TMP/err" "write error on standard output: No space left on device"
