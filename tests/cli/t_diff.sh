# efipt diff on two run directories of efipt.efi itself, loaded at different
# bases (as two builds differ in addresses), each with its own synthetic trace:
# every function's A and B columns must be what the independent reference
# (tests/cli/stack_ref.py: readelf/objdump, one step per instruction of the
# decoder's listing, checked against the synthesizer's ground truth) counts
# for that run; a run against itself diffs to "no change"; the gates exit 3
# or 0 as they should; --folded's counts are efipt flame's of each run; bad
# input is named.
. tests/lib.sh
build_output "diff"
fa=$(nm "$SO" | awk '$3 == "efi_main" { print $1 }')
S="--symbols $SO"

# mkrun DIR BASE INSNS SEED [SYNTH-OPTION]: efipt.efi laid out at BASE in a memory snapshot,
# a synthetic trace of INSNS instructions from efi_main; DIR/ref.csv and
# DIR/ref.folded: the reference's counts of that trace
mkrun() {
	D=$1 b=$2
	mkdir -p "$D"
	python3 tests/cli/pe_snapshot.py "$EFI" $b "$D/mem.bin" >"$TMP/pages"
	pages=$(( $(cat "$TMP/pages") / 4096 ))
	$EFIPT synth --out "$D/trace.pt" --truth "$TMP/truth" --raw "$D/mem.bin:$b" \
		--start $((b + 0x$fa)) --insns $3 --seed $4 ${5:-} 2>/dev/null
	printf '{"regions": [{"type": "LoaderCode", "phys": "%s", "pages": %d, "attr": "0xf", "snapshot": "mem.bin"}]}\n' \
		$b $pages >"$D/memmap.json"
	printf '{"images": [{"name": "efipt.efi", "base": "%s", "size": %d, "code_type": "LoaderCode", "path": "", "pdb": "/x/efipt.so"}]}\n' \
		$b $((pages * 4096)) >"$D/images.json"
	run_manifest "$D" trace.pt memmap.json images.json mem.bin
	$EFIPT insn --pt "$D/trace.pt" --raw "$D/mem.bin:$b" --no-inst >"$TMP/lst"
	# the listing's gaps, as the call-stack model counts them: an end of
	# tracing (disabled, overflow, error) after instructions since the last
	awk '/^\[(disabled|async disabled|overflow|gap)/ || /^\[.*error/ { if (n) g++; n = 0; next }
		/^\[/ { next } { n = 1 } END { print g + 0 }' "$TMP/lst" >"$D/gaps"
	if ! grep -v '^\[' "$TMP/lst" | cmp -s - "$TMP/truth"; then
		nok "diff: $D: decoder listing is the ground truth" "differs"
	fi
	python3 tests/cli/stack_ref.py "$SO" $b efipt.efi "$TMP/lst" "$D/ref.csv" "$D/ref.folded"
	cp "$TMP/truth" "$D/truth"
}
A=$TMP/a B=$TMP/b
mkrun "$A" 0x1000000 20000 2
mkrun "$B" 0x2400000 30000 5

# --- every function's counts: the reference's of each run -----------------
expect_rc "diff: csv" 0 $EFIPT diff "$A" "$B" $S --format csv
cp "$TMP/out" "$TMP/diff.csv"
if python3 - "$A/ref.csv" "$B/ref.csv" "$TMP/diff.csv" >"$TMP/cmp" 2>&1 <<'EOP'
import csv, sys
def ref(p):
    return {(r["image"], r["function"]): r for r in csv.DictReader(open(p))}
a, b = ref(sys.argv[1]), ref(sys.argv[2])
rows = list(csv.DictReader(open(sys.argv[3])))
got = {(r["image"], r["function"]): r for r in rows}
assert len(got) == len(rows), "a function twice"
assert set(got) == set(a) | set(b), "functions %s" % (set(got) ^ (set(a) | set(b)))
only = {"a": 0, "b": 0}
for k, r in got.items():
    for side, refs in (("a", a), ("b", b)):
        w = refs.get(k, {"excl": 0, "incl": 0, "calls": 0})
        for col in ("excl", "incl", "calls"):
            assert int(r[side + "_" + col]) == int(w[col]), (k, side, col, r, w)
    for col in ("excl", "incl"):
        assert int(r["delta_" + col]) == int(r["b_" + col]) - int(r["a_" + col]), (k, r)
    want = "only B" if k not in a else "only A" if k not in b else None
    if want:
        only[want[-1].lower()] += 1
        assert r["status"] == want, (k, r["status"])
    else:
        assert r["status"] in ("changed", "same"), (k, r["status"])
# sorted by |delta excl|
d = [abs(int(r["delta_excl"])) for r in rows]
assert d == sorted(d, reverse=True), "not sorted by the change"
print("%d functions, %d only in A, %d only in B" % (len(rows), only["a"], only["b"]))
EOP
then ok "diff: each function's A and B counts are the reference's ($(cat "$TMP/cmp"))"
else nok "diff: each function's A and B counts are the reference's" "$(tail -c 500 "$TMP/cmp")"; fi

# and they are efipt top's of each run
$EFIPT top "$A" $S --format csv >"$TMP/top_a.csv"
$EFIPT top "$B" $S --format csv >"$TMP/top_b.csv"
if python3 - "$TMP/top_a.csv" "$TMP/top_b.csv" "$TMP/diff.csv" <<'EOP'
import csv, sys
ta, tb = ({(r["image"], r["function"]): r for r in csv.DictReader(open(p))} for p in sys.argv[1:3])
rows = list(csv.DictReader(open(sys.argv[3])))
assert len(rows) == len(set(ta) | set(tb))
for r in rows:
    k = (r["image"], r["function"])
    for side, t in (("a", ta), ("b", tb)):
        w = t.get(k, {"excl": "0", "incl": "0", "calls": "0"})
        assert all(r[side + "_" + c] == w[c] for c in ("excl", "incl", "calls")), (k, side, r, w)
EOP
then ok "diff: each side's counts are efipt top's"; else nok "diff: each side's counts are efipt top's" "differ"; fi

expect_rc "diff: jsonl" 0 $EFIPT diff "$A" "$B" $S --format jsonl
if python3 - "$TMP/out" "$TMP/diff.csv" <<'EOP'
import csv, json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
s = lines[0]
assert s["type"] == "summary" and s["a"]["insns"] == 20000 and s["b"]["insns"] == 30000
assert s["delta"] == 10000 and s["a"]["images_with_symbols"] == 1
rows = list(csv.DictReader(open(sys.argv[2])))
assert len(lines) == len(rows) + 1
for j, r in zip(lines[1:], rows):
    assert (j["image"], j["function"], j["a_excl"], j["b_incl"], j["status"]) == \
        (r["image"], r["function"], int(r["a_excl"]), int(r["b_incl"]), r["status"])
EOP
then ok "diff: jsonl = csv, with a summary"; else nok "diff: jsonl = csv, with a summary" "$(head -c 300 "$TMP/out")"; fi

expect_rc "diff: text" 0 $EFIPT diff "$A" "$B" $S
contains "diff: text names run A" "$TMP/out" "A: $A (efipt trace; EDK II 0x1; CPU 6/94/3 0x000506e3): 20000 instructions"
gb=$(cat "$B/gaps")
[ "$gb" = 1 ] && gb="1 gap" || gb="$gb gaps"
contains "diff: text names run B and its symbols" "$TMP/out" "30000 instructions (0 in interrupts), $gb, 0 decode errors; symbols for 1 of 1 images (--symbols $SO)"
contains "diff: text total" "$TMP/out" "instructions (the code's own): A 20000, B 30000, B - A +10000 (+50.00%)"
top=$(sed -n '2p' "$TMP/diff.csv" | cut -d, -f2 | tr -d '"')
sed -n 7p "$TMP/out" >"$TMP/row1"
contains "diff: text's first row is the largest change" "$TMP/row1" "efipt.efi\`$top"

expect_rc "diff: --by image" 0 $EFIPT diff "$A" "$B" $S --by image --format csv
contains "diff: --by image row" "$TMP/out" '"efipt.efi",20000,30000,10000,changed'

# --- the same run against itself ------------------------------------------
expect_rc "diff: a run against itself" 0 $EFIPT diff "$A" "$A" $S
contains "diff: itself: no change" "$TMP/out" "no change: the same instructions in each of"
expect_rc "diff: itself: --fail-if-grows 0 --fail-if-new pass" 0 $EFIPT diff "$A" "$A" $S --fail-if-grows 0 --fail-if-new
if [ "$($EFIPT diff "$A" "$A" $S --format csv | tail -n +2 | grep -vc ',same,code$')" = 0 ]; then
	ok "diff: itself: every row same"; else nok "diff: itself: every row same" "$($EFIPT diff "$A" "$A" $S --format csv | grep -v ',same,code$' | head -3)"; fi

# --- gates -------------------------------------------------------------------
expect_rc "diff: --fail-if-grows 49.9 crossed (+50%)" 3 $EFIPT diff "$A" "$B" $S --fail-if-grows 49.9
contains "diff: the crossing named" "$TMP/err" "the run grew by +50.00% (20000 -> 30000 instructions, interrupts apart), more than --fail-if-grows 49.9%"
expect_rc "diff: --fail-if-grows 50 not crossed" 0 $EFIPT diff "$A" "$B" $S --fail-if-grows 50
expect_rc "diff: shrinking is no growth" 0 $EFIPT diff "$B" "$A" $S --fail-if-grows 0
# a function that grew by the reference: efi_main where the walks never left
# it (how often a walk returns out of the traced code depends on the
# compiler's code), else the largest in B; the gate's thresholds just
# below and at its growth, and its change as efipt diff prints it
set -- $(python3 - "$A/ref.csv" "$B/ref.csv" <<'EOP'
import csv, sys
a, b = ({r["function"]: int(r["incl"]) for r in csv.DictReader(open(p))} for p in sys.argv[1:3])
grew = [f for f in a if f in b and b[f] > a[f] > 0]
f = "efi_main" if "efi_main" in grew else max(grew, key=lambda f: (b[f], f))
d, n = (b[f] - a[f]) * 1000, a[f]
lo = (d - 1) // n          # d > n * lo: crossed
hi = -(-d // n)            # d <= n * hi: not crossed
t = lambda v: str(v // 10) if v % 10 == 0 else "%d.%d" % (v // 10, v % 10)
print(f, t(lo), t(hi), "%+.2f%%" % (100.0 * (b[f] - a[f]) / a[f]), a[f], b[f])
EOP
)
expect_rc "diff: --function $1 $2" 3 $EFIPT diff "$A" "$B" $S --fail-if-grows $2 --function $1
contains "diff: --function crossing named" "$TMP/err" "efipt.efi\`$1 grew by $4 ($5 -> $6 inclusive instructions), more than --fail-if-grows $2%"
expect_rc "diff: --function IMAGE\`NAME $3" 0 $EFIPT diff "$A" "$B" $S --fail-if-grows $3 --function "efipt.efi\`$1"
expect_rc "diff: --image EFIPT 10" 3 $EFIPT diff "$A" "$B" $S --fail-if-grows 10 --image EFIPT
contains "diff: --image crossing named" "$TMP/err" "image efipt.efi grew by +50.00%"
expect_rc "diff: --function that ran nowhere" 3 $EFIPT diff "$A" "$B" $S --fail-if-grows 10 --function no_such_fn
contains "diff: --function nowhere named" "$TMP/err" "--function no_such_fn: ran in neither run"
expect_rc "diff: --function without --fail-if-grows" 2 $EFIPT diff "$A" "$B" $S --function efi_main
# functions new in B by the reference (not by efipt): a pair with some and
# one with none (E: A's seed, a longer trace, at a third base)
E=$TMP/e
mkrun "$E" 0x3000000 30000 2
gate_new() {
	new=$(python3 -c '
import csv, sys
names = lambda p: {(r["image"], r["function"]) for r in csv.DictReader(open(p))}
n = sorted(names(sys.argv[2]) - names(sys.argv[1]))
print(len(n), n[0][1] if n else "")' "$1/ref.csv" "$2/ref.csv")
	if [ "${new% *}" -gt 0 ]; then
		expect_rc "diff: --fail-if-new: ${new% *} new by the reference: 3" 3 $EFIPT diff "$1" "$2" $S --fail-if-new
		contains "diff: --fail-if-new names ${new#* }" "$TMP/err" "efipt.efi\`${new#* } ran in B only"
		return 1
	fi
	expect_rc "diff: --fail-if-new: none new by the reference: 0" 0 $EFIPT diff "$1" "$2" $S --fail-if-new
}
# which walk reaches a function A's does not depends on efipt.efi's code: B,
# then E, then walks of other seeds until one does
found=0
for c in "$B" "$E"; do
	gate_new "$A" "$c" || { found=1; break; }
done
s=7
while [ $found = 0 ] && [ $s -le 12 ]; do
	mkrun "$TMP/n$s" 0x2800000 40000 $s
	gate_new "$A" "$TMP/n$s" || found=1
	s=$((s + 1))
done
[ $found = 1 ] || nok "diff: --fail-if-new" "no test run has a function new against A"
gate_new "$E" "$A" || nok "diff: --fail-if-new" "the test runs E, A have a function new in A"

# --- differential folded stacks: each count is efipt flame's ----------------
expect_rc "diff: --folded" 0 $EFIPT diff "$A" "$B" $S --folded
cp "$TMP/out" "$TMP/folded"
$EFIPT flame "$A" $S >"$TMP/fa"
$EFIPT flame "$B" $S >"$TMP/fb"
if python3 tests/cli/diff_folded_check.py "$TMP/folded" "$TMP/fa" "$TMP/fb" 20000 30000 2>"$TMP/cmp" &&
   [ "$(sort "$TMP/fa")" = "$(sort "$A/ref.folded")" ]
then ok "diff: --folded counts are flame's of A and of B"; else nok "diff: --folded counts are flame's of A and of B" "$(cat "$TMP/cmp") $(head -3 "$TMP/folded")"; fi

# --- bad input -------------------------------------------------------------
expect_rc "diff: one run" 2 $EFIPT diff "$A" $S
contains "diff: one run named" "$TMP/err" "too few runs: give two run directories, A (before) and B (after)"
expect_rc "diff: three runs" 2 $EFIPT diff "$A" "$B" "$A" $S
expect_rc "diff: a missing run" 2 $EFIPT diff "$A" "$TMP/none" $S
contains "diff: the missing run named" "$TMP/err" "efipt diff: B: "
contains "diff: the missing directory named" "$TMP/err" "$TMP/none"
expect_rc "diff: bad --fail-if-grows" 2 $EFIPT diff "$A" "$B" $S --fail-if-grows 5%
contains "diff: bad --fail-if-grows named" "$TMP/err" "--fail-if-grows takes a percentage (at most one decimal: 2.5), not '5%'"
expect_rc "diff: bad --by" 2 $EFIPT diff "$A" "$B" $S --by line
contains "diff: bad --by named" "$TMP/err" "--by takes function or image, not 'line'"
expect_rc "diff: bad --format" 2 $EFIPT diff "$A" "$B" $S --format xml
contains "diff: bad --format named" "$TMP/err" "--format takes text, jsonl or csv, not 'xml'"
expect_rc "diff: --from with --folded" 2 $EFIPT diff "$A" "$B" $S --from efi_main --folded
contains "diff: --from with --folded named" "$TMP/err" "not with --folded, --coverage or --fail-if-coverage-lost"
expect_rc "diff: --from a function that never ran" 2 $EFIPT diff "$A" "$B" $S --from no_such_function
contains "diff: --from a function that never ran named" "$TMP/err" "efipt diff: A: --from no_such_function never ran"
# calls and timeline take an instruction index too; diff says why it does not
expect_rc "diff: --from an instruction index" 2 $EFIPT diff "$A" "$B" $S --from 1000
contains "diff: --from an index refused, saying why" "$TMP/err" "--from 1000: diff takes a function here, not an instruction index"
# a window from the trace's first function to its end is the whole run
$EFIPT diff "$A" "$B" $S --format csv >"$TMP/w0.csv" 2>/dev/null
$EFIPT diff "$A" "$B" $S --format csv --from efi_main >"$TMP/w1.csv" 2>/dev/null
if [ -s "$TMP/w0.csv" ] && cmp -s "$TMP/w0.csv" "$TMP/w1.csv"; then ok "diff: --from the first function: the whole run"; else nok "diff: --from the first function: the whole run" "$(diff "$TMP/w0.csv" "$TMP/w1.csv" | head -5)"; fi
expect_rc "diff: --format jsonl --by image" 0 $EFIPT diff "$A" "$B" $S --format jsonl --by image
contains "diff: --format jsonl --by image: image rows" "$TMP/out" '{"type":"image","image":"efipt.efi","a_insns":20000,"b_insns":30000,"delta":10000,"status":"changed","context":"code"}'
expect_rc "diff: --folded with --format" 2 $EFIPT diff "$A" "$B" $S --folded --format csv
# B's symbols are a file of no image of it: its functions cannot be matched
expect_rc "diff: one side without symbols refused" 2 $EFIPT diff "$A" "$B" $S --symbols-b "$TMP/none.so"
cp "$SO" "$TMP/other.so"
objcopy --strip-all "$TMP/other.so"
expect_rc "diff: one side without symbols refused" 2 $EFIPT diff "$A" "$B" $S --symbols-b "$TMP/other.so"
contains "diff: the image without symbols named" "$TMP/err" "image efipt.efi ran in both runs but has symbols in A only"
expect_rc "diff: ... but --by image compares" 0 $EFIPT diff "$A" "$B" $S --symbols-b "$TMP/other.so" --by image
contains "diff: ... by image" "$TMP/out" "efipt.efi"
expect_rc "diff: no symbols at all: by image+[unknown]" 0 $EFIPT diff "$A" "$B" --format csv
contains "diff: no symbols: one [unknown] row" "$TMP/out" '"efipt.efi","[unknown]",20000,30000,10000,'
# another CPU and firmware: warned, compared
C=$TMP/c
cp -r "$B" "$C"
sed -i 's/"family":6,"model":94/"family":6,"model":142/; s/"vendor":"EDK II"/"vendor":"coreboot"/' "$C/manifest.json"
expect_rc "diff: other CPU and firmware compared" 0 $EFIPT diff "$A" "$C" $S --format csv
contains "diff: other CPU warned" "$TMP/err" "warning: the runs are of different CPUs (A: CPU 6/94/3 0x000506e3, B: CPU 6/142/3 0x000506e3)"
contains "diff: other firmware warned" "$TMP/err" "warning: the runs are of different firmware (A: EDK II 0x1, B: coreboot 0x1)"
if cmp -s "$TMP/out" "$TMP/diff.csv"; then ok "diff: other CPU: the same rows"; else nok "diff: other CPU: the same rows" "differ"; fi
# an image renamed in B: two images without --rename, one with it
R=$TMP/r
cp -r "$B" "$R"
sed -i 's/"efipt.efi"/"BOOTX64.EFI"/' "$R/images.json"
run_manifest "$R" trace.pt memmap.json images.json mem.bin
expect_rc "diff: a renamed image" 0 $EFIPT diff "$A" "$R" $S --by image --format csv
contains "diff: renamed: A's image only in A" "$TMP/out" '"efipt.efi",20000,0,-20000,only A'
contains "diff: renamed: B's image only in B" "$TMP/out" '"BOOTX64.EFI",0,30000,30000,only B'
expect_rc "diff: --rename efipt.efi=BOOTX64.EFI" 0 $EFIPT diff "$A" "$R" $S --rename efipt.efi=BOOTX64.EFI --format csv
if cmp -s "$TMP/out" "$TMP/diff.csv"; then ok "diff: --rename: the rows of the same name"; else nok "diff: --rename: the rows of the same name" "$(diff "$TMP/diff.csv" "$TMP/out" | head -3)"; fi
$EFIPT diff "$A" "$B" $S --folded >"$TMP/f1"
$EFIPT diff "$A" "$R" $S --rename efipt.efi=BOOTX64.EFI --folded >"$TMP/f2"
if [ -s "$TMP/f1" ] && cmp -s "$TMP/f1" "$TMP/f2"; then ok "diff: --rename: the same folded stacks"; else nok "diff: --rename: the same folded stacks" "$(diff "$TMP/f1" "$TMP/f2" | head -3)"; fi
expect_rc "diff: bad --rename" 2 $EFIPT diff "$A" "$R" $S --rename efipt.efi
contains "diff: bad --rename named" "$TMP/err" "--rename takes OLD=NEW"
# B with timing packets, A without: instructions compared, said once
T=$TMP/t
mkrun "$T" 0x1000000 20000 2 --tsc
expect_rc "diff: one run with timing" 0 $EFIPT diff "$A" "$T" $S
contains "diff: timing not compared, said" "$TMP/err" "efipt diff: note: trace B has timing packets, A has none: instructions compared, not time"
[ "$(grep -c 'timing packets' "$TMP/err")" = 1 ] && ok "diff: timing said once" || nok "diff: timing said once" "$(cat "$TMP/err")"
contains "diff: the same instructions with timing packets" "$TMP/out" "no change: the same instructions in each of"
if grep -q "time (" "$TMP/out"; then nok "diff: one run with timing: no time in the output" "$(grep "time (" "$TMP/out")"; else ok "diff: one run with timing: no time in the output"; fi
$EFIPT diff "$A" "$T" $S --format csv >"$TMP/t.csv" 2>/dev/null
head -1 "$TMP/t.csv" | grep -q "_ns" && nok "diff: one run with timing: no time columns" "$(head -1 "$TMP/t.csv")" || ok "diff: one run with timing: no time columns"
# both with timing (a PSB+ with its TSC every 256 bytes): each function's
# time in A and in B is efipt top's
T=$TMP/t1 T2=$TMP/t2
mkrun "$T" 0x1000000 20000 2 "--tsc --psb-period 256"
mkrun "$T2" 0x2400000 30000 5 "--tsc --psb-period 256"
expect_rc "diff: both runs with timing" 0 $EFIPT diff "$T" "$T2" $S
if grep -q "timing packets" "$TMP/err"; then nok "diff: both with timing: nothing to say" "$(cat "$TMP/err")"; else ok "diff: both with timing: nothing to say"; fi
contains "diff: both with timing: the time header" "$TMP/out" "time (ticks; the code's own):"
contains "diff: both with timing: time columns" "$TMP/out" "A excl ticks"
$EFIPT diff "$T" "$T2" $S --format csv >"$TMP/tt.csv" 2>"$TMP/err"
$EFIPT top "$T" $S --format csv --limit 100000 >"$TMP/ta.csv" 2>/dev/null
$EFIPT top "$T2" $S --format csv --limit 100000 >"$TMP/tb.csv" 2>/dev/null
if python3 - "$TMP/ta.csv" "$TMP/tb.csv" "$TMP/tt.csv" >"$TMP/cmp" 2>&1 <<'EOP'
import csv, sys
def top(p):
    return {(r["image"], r["function"]): r for r in csv.DictReader(open(p))}
a, b = top(sys.argv[1]), top(sys.argv[2])
rows = list(csv.DictReader(open(sys.argv[3])))
assert rows and "a_excl_ns" in rows[0], "no time columns"
assert any(int(r["a_excl_ns"]) for r in rows), "all times 0"
for r in rows:
    k = (r["image"], r["function"])
    for side, t in (("a", a), ("b", b)):
        want = (int(t[k]["excl_ns"]), int(t[k]["incl_ns"])) if k in t else (0, 0)
        got = (int(r[side + "_excl_ns"]), int(r[side + "_incl_ns"]))
        assert got == want, (k, side, got, want)
    assert int(r["delta_excl_ns"]) == int(r["b_excl_ns"]) - int(r["a_excl_ns"]), r
assert len(rows) == len(set(a) | set(b)), (len(rows), len(set(a) | set(b)))
print(len(rows), "functions")
EOP
then ok "diff: both with timing: every function's times are top's of each run ($(cat "$TMP/cmp"))"
else nok "diff: both with timing: every function's times are top's of each run" "$(tail -c 600 "$TMP/cmp")"; fi
# --coverage: each function's distinct instructions executed, as the
# synthesizer's ground truth has them (its addresses, in the ELF's function
# symbols), and the totals efipt coverage's
expect_rc "diff: --coverage" 0 $EFIPT diff "$A" "$B" $S --coverage --format csv
cp "$TMP/out" "$TMP/cov.csv"
$EFIPT coverage "$A" --format json >"$TMP/ca.json" 2>/dev/null
$EFIPT coverage "$B" --format json >"$TMP/cb.json" 2>/dev/null
if python3 - "$SO" "$A/truth" 0x1000000 "$B/truth" 0x2400000 "$TMP/cov.csv" >"$TMP/cmp" 2>&1 <<'EOP'
import csv, subprocess, sys
so, ta, ba, tb, bb, got = sys.argv[1:7]
funcs = []
for line in subprocess.run(["readelf", "-sW", so], capture_output=True, text=True, check=True).stdout.splitlines():
    f = line.split()
    if len(f) >= 8 and f[3] == "FUNC" and f[6] != "UND" and int(f[2], 0):
        funcs.append((int(f[1], 16), int(f[1], 16) + int(f[2], 0), f[7].split(".")[0]))
def hits(truth, base):
    h = {}
    for a in set(int(l, 16) for l in open(truth)):
        n = sorted(set(name for lo, hi, name in funcs if lo <= a - int(base, 0) < hi))
        k = n[0] if len(n) == 1 else "[unknown]" if not n else None
        assert k is not None, ("two symbols at", hex(a), n)
        h[k] = h.get(k, 0) + 1
    return h
ha, hb = hits(ta, ba), hits(tb, bb)
rows = list(csv.DictReader(open(got)))
assert rows and "a_hit" in rows[0], "no hit columns"
g = {r["function"]: r for r in rows}
for f in set(ha) | set(hb):
    r = g.get(f)
    assert r, ("not in the diff", f)
    assert (int(r["a_hit"]), int(r["b_hit"])) == (ha.get(f, 0), hb.get(f, 0)), (f, r["a_hit"], r["b_hit"], ha.get(f), hb.get(f))
assert all(r["function"] in ha or r["function"] in hb or (r["a_hit"], r["b_hit"]) == ("0", "0") for r in rows)
print("%d functions, %d and %d instructions" % (len(set(ha) | set(hb)), sum(ha.values()), sum(hb.values())))
EOP
then ok "diff: --coverage: every function's hits are the ground truth's ($(cat "$TMP/cmp"))"
else nok "diff: --coverage: every function's hits are the ground truth's" "$(tail -c 600 "$TMP/cmp")"; fi
$EFIPT diff "$A" "$B" $S --coverage >"$TMP/out" 2>/dev/null
ca=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["total"]["insns"])' "$TMP/ca.json" 2>/dev/null)
cb=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["total"]["insns"])' "$TMP/cb.json" 2>/dev/null)
contains "diff: --coverage: the totals are efipt coverage's" "$TMP/out" "coverage (distinct instructions executed): A $ca, B $cb,"
# the gate: B (30000 instructions) covers functions A did not and misses
# some A covered (different walks)
expect_rc "diff: --fail-if-coverage-lost" 3 $EFIPT diff "$A" "$B" $S --fail-if-coverage-lost
contains "diff: --fail-if-coverage-lost names a function" "$TMP/err" "lost coverage: "
expect_rc "diff: --fail-if-coverage-lost: a run against itself" 0 $EFIPT diff "$A" "$A" $S --fail-if-coverage-lost
expect_rc "diff: --fail-if-coverage-lost: B against A" 3 $EFIPT diff "$B" "$A" $S --fail-if-coverage-lost
# a damaged trace in B: its decode errors named, exit 1
D=$TMP/d
cp -r "$B" "$D"
python3 -c "
import sys
p = sys.argv[1]
d = bytearray(open(p, 'rb').read())
for i in range(len(d) // 3, len(d) // 3 + 64):
    d[i] ^= 0x5a
open(p, 'wb').write(d)" "$D/trace.pt"
expect_rc "diff: decode errors in B: exit 1" 1 $EFIPT diff "$A" "$D" $S
contains "diff: the decode errors named by run" "$TMP/err" "efipt diff: B"
contains "diff: the errors counted in the header" "$TMP/out" "B: $D"
expect_rc "diff: --help" 0 $EFIPT diff --help
contains "diff: --help names the gates" "$TMP/out" "--fail-if-grows PCT"
expect_rc "efipt --help lists diff" 0 $EFIPT --help
contains "efipt --help lists diff" "$TMP/out" "diff       what changed between two runs"
