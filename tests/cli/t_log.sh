# efipt log on debugport.jsonl (qemu-plugin/debugport.h): lines joined across
# records and split within one, each at the instruction of its first byte,
# per CPU; every malformed record refused with its line number; mutated
# files read or refused cleanly (exit 0 or 1, a message), never a crash.
. tests/lib.sh
. tests/cli/lib_rundir.sh

J=$D/debugport.jsonl
cat >"$J" <<'EOJ'
{"cpu":0,"insn":5,"ip":"0x1004","bytes":"Hello, "}
{"cpu":0,"insn":9,"ip":"0x1008","bytes":"world\r\nSecond"}
{"cpu":1,"insn":null,"ip":"0x2000","bytes":"AP \u00e9\n"}
{"cpu":0,"insn":20,"ip":"0x1010","bytes":" line\n"}
EOJ
expect_rc "log: the debug output" 0 $EFIPT log "$D"
expect "log: three lines, each at its first byte's instruction and place" python3 -c "
got = open('$TMP/out').read().split('\n')
want = [('0', '5', 'loop.efi+0x4', 'Hello, world'), ('1', '-', '0x2000', 'AP \\\\xe9'),
        ('0', '9', 'loop.efi+0x8', 'Second line'), ()]
assert [tuple(l.split(None, 3)) for l in got] == want, got"
expect_rc "log --format jsonl" 0 $EFIPT log --format jsonl "$D"
expect "log --format jsonl: the same lines, bytes as code points, null before tracing" python3 -c "
import json
got = [json.loads(l) for l in open('$TMP/out')]
assert [(o['cpu'], o['insn'], o['ip'], o['function'], o['text']) for o in got] == [
    (0, 5, '0x1004', 'loop.efi+0x4', 'Hello, world'), (1, None, '0x2000', '0x2000', 'AP \u00e9'),
    (0, 9, '0x1008', 'loop.efi+0x8', 'Second line')], got"
expect_rc "log --cpu 1: that CPU's lines" 0 $EFIPT log --cpu 1 "$D"
expect "log --cpu 1: only CPU 1's line" sh -c "[ \$(wc -l <'$TMP/out') -eq 1 ] && grep -q '^  1 ' '$TMP/out'"
expect_rc "log --cpu 2: no output from that CPU" 1 $EFIPT log --cpu 2 "$D"
contains "log --cpu 2: said, with the records read" "$TMP/err" "no debug output from that CPU (4 records)"
expect_rc "log --cpu 64: refused" 2 $EFIPT log --cpu 64 "$D"
contains "log --cpu 64: the limit named" "$TMP/err" "--cpu takes a CPU number below 64, not '64'"
expect_rc "log --format xml: refused" 2 $EFIPT log --format xml "$D"

# one bad record among good ones: exit 1 naming the file's line
cp -r "$D" "$TMP/bad"
bad_record() {
	{ head -n 2 "$J"; printf '%s\n' "$2"; } >"$TMP/bad/debugport.jsonl"
	expect_rc "log: $1 refused" 1 $EFIPT log "$TMP/bad"
	contains "log: $1 named with its line" "$TMP/err" "debugport.jsonl: line 3: $3"
}
bad_record "a line that is no JSON" '{"cpu":0,' "not a debug port record"
bad_record "a record without bytes" '{"cpu":0,"insn":1,"ip":"0x1"}' "not a debug port record"
bad_record "a CPU past 63" '{"cpu":64,"insn":1,"ip":"0x1","bytes":"x"}' "not a debug port record"
bad_record "a negative CPU" '{"cpu":-1,"insn":1,"ip":"0x1","bytes":"x"}' "not a debug port record"
bad_record "an insn that is a string" '{"cpu":0,"insn":"1","ip":"0x1","bytes":"x"}' "not a debug port record"
bad_record "an ip that is no hex number" '{"cpu":0,"insn":1,"ip":"0xZZ","bytes":"x"}' "not a debug port record"
bad_record "an ip past 64 bits" '{"cpu":0,"insn":1,"ip":"0x10000000000000000","bytes":"x"}' "not a debug port record"
bad_record "a character above 0xff" '{"cpu":0,"insn":1,"ip":"0x1","bytes":"\u0100"}' 'bytes above 0xff in "bytes"'
: >"$TMP/bad/debugport.jsonl"
expect_rc "log: an empty debugport.jsonl" 1 $EFIPT log "$TMP/bad"
contains "log: an empty file said" "$TMP/err" "no debug output (0 records)"
rm "$TMP/bad/debugport.jsonl"
expect_rc "log: no debugport.jsonl" 1 $EFIPT log "$TMP/bad"
contains "log: the missing file named, and who records it" "$TMP/err" "debugport.jsonl: No such file or directory (efipt qemu records the debug port"

# mutated files: read or refused, never a crash or a hang (exit 0 or 1)
mkdir -p "$TMP/mut"
python3 - "$J" "$TMP/mut" <<'PY'
import random, sys
r = random.Random(7)
d = open(sys.argv[1], "rb").read()
for i in range(150):
    m = bytearray(d * r.randrange(1, 4))
    if i % 5 == 0:
        m = m[: r.randrange(len(m))]
    for _ in range(r.randrange(1, 6)):
        m[r.randrange(len(m))] = r.choice([r.randrange(256), ord('"'), ord("\\"), ord("\n"), ord("9"), ord("-"), ord("{")])
    open("%s/%03d.jsonl" % (sys.argv[2], i), "wb").write(bytes(m))
PY
cp -r "$D" "$TMP/m"
badmut=""
for f in "$TMP"/mut/*.jsonl; do
	cp "$f" "$TMP/m/debugport.jsonl"
	timeout 20 $EFIPT log "$TMP/m" >/dev/null 2>"$TMP/err"
	rc=$?
	if [ "$rc" -gt 1 ] || { [ "$rc" -eq 1 ] && ! grep -q "efipt log: " "$TMP/err"; }; then
		badmut="$badmut $(basename "$f"):$rc"
	fi
done
[ -z "$badmut" ] && ok "log: 150 mutated debugport.jsonl files read or refused cleanly" ||
	nok "log: mutated debugport.jsonl files" "exit status:$badmut"
