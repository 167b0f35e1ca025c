# The firmware's DEBUG lines (debugport.jsonl) in efipt calls and efipt
# timeline, each placed at the instruction that wrote its first byte: in
# calls one level inside the function that wrote it, in timeline an instant
# on its CPU's track. The loop of lib_rundir.sh: the root at 0, its callee
# entered at 3, 14, 25, ...; lines at 5 (in the callee) and 9 (in the root).
. tests/lib.sh
. tests/cli/lib_rundir.sh

cat >"$D/debugport.jsonl" <<'EOJ'
{"cpu":0,"insn":5,"ip":"0x1014","bytes":"Hello, "}
{"cpu":0,"insn":9,"ip":"0x1014","bytes":"world\r\nSecond"}
{"cpu":1,"insn":null,"ip":"0x2000","bytes":"AP \u00e9\n"}
{"cpu":0,"insn":20,"ip":"0x1004","bytes":" line\n"}
{"cpu":0,"insn":null,"ip":"0x1004","bytes":"untraced\n"}
EOJ
expect_rc "calls: with DEBUG lines" 0 $EFIPT calls --to 30 "$D"
cat >"$TMP/want" <<'EOW'
           0  loop.efi+0x0 (root)
           3    loop.efi+0x10
           5      # Hello, world
           9    # Second line
          14    loop.efi+0x10
          25    loop.efi+0x10
EOW
expect "calls: each line at its instruction, inside the function that wrote it" \
	diff "$TMP/want" "$TMP/out"
expect_rc "calls --no-log" 0 $EFIPT calls --to 30 --no-log "$D"
expect "calls --no-log: no DEBUG line" sh -c "! grep -q '#' '$TMP/out' && [ \$(wc -l <'$TMP/out') -eq 4 ]"
expect_rc "calls --from 6" 0 $EFIPT calls --from 6 --to 30 "$D"
expect "calls --from 6: the line at 5 is outside the window, 9's inside" \
	sh -c "! grep -q 'Hello' '$TMP/out' && grep -q '^           9    # Second line$' '$TMP/out'"
expect_rc "calls --depth 1" 0 $EFIPT calls --depth 1 --to 30 "$D"
expect "calls --depth 1: a line in the root's callee is deeper than asked" \
	sh -c "! grep -q 'Hello' '$TMP/out' && grep -q 'Second line' '$TMP/out'"

expect_rc "timeline: with DEBUG lines" 0 $EFIPT timeline --to 30 -o "$TMP/tl.json" "$D"
expect "timeline: each traced line of CPU 0 an instant at its instruction, named by its text" python3 -c "
import json
d = json.load(open('$TMP/tl.json'))
got = [(e['ts'], e['name'], e['args']['ip']) for e in d['traceEvents']
       if e.get('ph') == 'i' and 'debug_port' in e.get('args', {})]
assert got == [(5, 'Hello, world', '0x1014'), (9, 'Second line', '0x1014')], got
assert d['otherData']['debug_lines'] == 2, d['otherData']"
expect_rc "timeline -o .pftrace: with DEBUG lines" 0 $EFIPT timeline --to 30 -o "$TMP/tl.pftrace" "$D"
expect "timeline -o .pftrace: the lines' texts are interned names" sh -c \
	"grep -q 'Hello, world' '$TMP/tl.pftrace' && grep -q 'Second line' '$TMP/tl.pftrace'"
expect_rc "timeline --no-log" 0 $EFIPT timeline --to 30 --no-log -o "$TMP/tl2.json" "$D"
expect "timeline --no-log: no DEBUG instant" python3 -c "
import json
d = json.load(open('$TMP/tl2.json'))
assert d['otherData']['debug_lines'] == 0 and not [e for e in d['traceEvents'] if 'Hello' in e.get('name', '')]"

# a damaged debugport.jsonl is refused by name, never shown in part
cp -r "$D" "$TMP/bad"
printf '{"cpu":0,"insn":"x","ip":"0x1","bytes":""}\n' >>"$TMP/bad/debugport.jsonl"
expect_rc "calls: a damaged debugport.jsonl refused (an unreadable input: 2)" 2 $EFIPT calls --to 30 "$TMP/bad"
contains "calls: the damaged record named by its line" "$TMP/err" "debugport.jsonl: line 6: not a debug port record"
expect_rc "calls --no-log: the damaged file is not read" 0 $EFIPT calls --to 30 --no-log "$TMP/bad"
expect_rc "timeline: a damaged debugport.jsonl refused" 2 $EFIPT timeline --to 30 -o "$TMP/bad.json" "$TMP/bad"
contains "timeline: the damaged record named by its line" "$TMP/err" "debugport.jsonl: line 6: not a debug port record"
expect "timeline: nothing written on failure" test ! -e "$TMP/bad.json"

# A timed trace (CYC: the time moves at nearly every packet, so a batch of
# blocks has many times): each line's instant has the time of the blocks
# that passed its instruction, the time at which a window --from the next
# instruction opens and one --to it closes. A window's events are never
# earlier than its opening nor later than its close, and mostly at them
# (its first slice is cut where it opens, its last where it closes).
cp -r "$D" "$TMP/timed"
$EFIPT synth --raw "$D/mem-0000000000001000.bin:0x1000" --start 0x1000 --out "$TMP/timed/trace.pt" \
	--insns 3000 --cyc --psb-period 256 2>/dev/null
manifest "$TMP/timed"
python3 -c "
import json
with open('$TMP/timed/debugport.jsonl', 'w') as f:
    for x in range(7, 2900, 97):
        f.write(json.dumps({'cpu': 0, 'insn': x, 'ip': '0x1014', 'bytes': 'line %d\n' % x}) + '\n')"
expect_rc "timeline: DEBUG lines on a timed trace" 0 $EFIPT timeline --nom-freq 32 -o "$TMP/timed.json" "$TMP/timed"
expect "timeline: each line at the time of the blocks that passed its instruction" python3 -c "
import json, subprocess
d = json.load(open('$TMP/timed.json'))
lines = [(e['args']['insn'], e['ts']) for e in d['traceEvents']
         if e.get('ph') == 'i' and 'debug_port' in e.get('args', {})]
assert len(lines) == 30, lines
def window(x, opt):
    subprocess.run(['$EFIPT', 'timeline', '--nom-freq', '32', '--no-log', opt, str(x + 1),
                    '-o', '$TMP/timed-w.json', '$TMP/timed'], check=True, capture_output=True)
    w = json.load(open('$TMP/timed-w.json'))
    return [e['ts'] for e in w['traceEvents'] if 'ts' in e and e.get('ph') != 'M']
opened = closed = 0
for x, ts in lines:
    first, last = min(window(x, '--from')), max(window(x, '--to'))
    assert first >= ts, ('line', x, 'at', ts, 'after the window from', x + 1, 'opened at', first)
    assert last <= ts, ('line', x, 'at', ts, 'before the window to', x + 1, 'closed at', last)
    opened += ts == first
    closed += ts == last
assert 4 * opened >= 3 * len(lines) and 4 * closed >= 3 * len(lines), (opened, closed, len(lines))"
