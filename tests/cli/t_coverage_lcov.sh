# efipt coverage --format lcov on real build output (efipt.efi and its
# gnu-efi ELF build/efipt.so), traced by the synthesizer: line hits and
# branches (BRDA) equal an independent reference (tests/cli/lcov_ref.py:
# objdump's line table and disassembly, the synthesizer's ground truth), and
# Debian's genhtml renders the tracefile with branch coverage, and so does
# lcov 2's where make lcov2 unpacked it (build/lcov2).
. tests/lib.sh
build_output lcov
# gnu-efi's crt0 was built elsewhere: its source is mapped to a stand-in
$EFIPT synth --out "$TMP/p.pt" $PE --insns 1000 2>/dev/null
$EFIPT coverage --pt "$TMP/p.pt" $PE --symbols "$SO" --format lcov -o "$TMP/p.info" 2>/dev/null
crt0=$(sed -n 's|^SF:\(.*\)/crt0-efi-x86_64.S$|\1|p' "$TMP/p.info" | head -1)
mkdir -p "$TMP/gnuefi"
i=0
while [ $i -lt 400 ]; do echo "/* $i */"; i=$((i + 1)); done >"$TMP/gnuefi/crt0-efi-x86_64.S"
MAP=""
[ -n "$crt0" ] && MAP="--source-map $crt0=$TMP/gnuefi"

check() {
	name=$1
	bounds=$2
	shift 2
	$EFIPT synth --out "$TMP/t.pt" --truth "$TMP/t.truth" $PE --insns 60000 "$@" 2>/dev/null
	expect_rc "$name: written" 0 $EFIPT coverage --pt "$TMP/t.pt" $PE --symbols "$SO" --format lcov -o "$TMP/t.info" $MAP
	r=$(python3 tests/cli/lcov_ref.py "$TMP/t.info" "$SO" $BASE "$TMP/t.truth" $bounds)
	case "$r" in ok*) ok "$name: lines and branches equal the reference ($r)" ;; *) nok "$name: lines and branches equal the reference" "$r" ;; esac
}
# an interrupt right after a branch hides its outcome from the truth (not
# from the trace): there the reference gives bounds
check "lcov: interrupts and overflows" --bounds --seed 4 --interrupts 200 --ovf 300
check "lcov: plain trace" "" --seed 3

if command -v genhtml >/dev/null; then
	expect_rc "lcov: genhtml renders the tracefile" 0 genhtml -q --branch-coverage -o "$TMP/html" "$TMP/t.info"
	[ -f "$TMP/html/index.html" ] && ok "lcov: genhtml wrote index.html" || nok "lcov: genhtml wrote index.html" "missing"
	brh=$(awk -F: '/^BRH:/ { n += $2 } END { print n + 0 }' "$TMP/t.info")
	contains "lcov: genhtml shows the branches hit" "$TMP/html/index.html" ">$brh<"
else
	nok "lcov: genhtml renders the tracefile" "genhtml missing (Debian package lcov: mk/deps.sh)"
fi

# lcov 2 (Debian 13's) checks the tracefile's consistency
. tests/cli/lcov2.sh
lcov2_renders "lcov" "$TMP/t.info"
# 500000 instructions reach functions that only run inlined (lcov 2 refused
# them without an FN record of their own: rename_open_file after esp_delete)
$EFIPT synth --out "$TMP/l.pt" $PE --insns 500000 2>/dev/null
$EFIPT coverage --pt "$TMP/l.pt" $PE --symbols "$SO" --format lcov -o "$TMP/l.info" $MAP
lcov2_renders "lcov: 500000 instructions" "$TMP/l.info"

fa=$(nm "$SO" | awk '$3 == "efi_main" { print $1 }')
n=$(grep -ci "^0*$(printf '%x' $((BASE + 0x$fa)))\$" "$TMP/t.truth")
contains "lcov: efi_main's entry count" "$TMP/t.info" "FNDA:$n,efi_main"
contains "lcov: --source-map rewrites the path" "$TMP/t.info" "SF:$TMP/gnuefi/crt0-efi-x86_64.S"
contains "lcov: sources by absolute path" "$TMP/t.info" "SF:$(pwd)/core/cmdline.c"

# the reference can fail: one line's count changed
awk '/^DA:/ && !done && $0 !~ /,0$/ { split($0, a, ","); print a[1] "," a[2] + 1; done = 1; next } { print }' \
	"$TMP/t.info" >"$TMP/bad.info"
r=$(python3 tests/cli/lcov_ref.py "$TMP/bad.info" "$SO" $BASE "$TMP/t.truth")
case "$r" in ok*) nok "lcov: the reference rejects a wrong count" "accepted" ;; *) ok "lcov: the reference rejects a wrong count" ;; esac
awk '/^BRDA:/ && !done && $0 !~ /,-$/ { n = split($0, a, ","); $0 = a[1] "," a[2] "," a[3] "," a[4] + 1; done = 1 } { print }' \
	"$TMP/t.info" >"$TMP/bad.info"
r=$(python3 tests/cli/lcov_ref.py "$TMP/bad.info" "$SO" $BASE "$TMP/t.truth")
case "$r" in ok*) nok "lcov: the reference rejects a wrong branch count" "accepted" ;; *) ok "lcov: the reference rejects a wrong branch count ($r)" ;; esac
sed '0,/^BRDA:\(.*\),[0-9][0-9]*$/s//BRDA:\1,-/' "$TMP/t.info" >"$TMP/bad.info"
r=$(python3 tests/cli/lcov_ref.py "$TMP/bad.info" "$SO" $BASE "$TMP/t.truth")
case "$r" in ok*) nok "lcov: the reference rejects '-' for a branch that ran" "accepted" ;; *) ok "lcov: the reference rejects '-' for a branch that ran" ;; esac
contains "lcov: branch totals written" "$TMP/t.info" "BRF:"

# errors
expect_rc "lcov: -o required" 2 $EFIPT coverage --pt "$TMP/t.pt" $PE --symbols "$SO" --format lcov
contains "lcov: -o required said" "$TMP/err" "--format lcov needs -o FILE.info"
expect_rc "lcov: bad --source-map" 2 $EFIPT coverage --pt "$TMP/t.pt" $PE --format lcov -o "$TMP/x.info" --source-map nothing
contains "lcov: bad --source-map said" "$TMP/err" "--source-map wants OLD=NEW"
echo keep >"$TMP/keep.info"
expect_rc "lcov: a missing trace" 2 $EFIPT coverage --pt "$TMP/none.pt" $PE --symbols "$SO" --format lcov -o "$TMP/keep.info"
if [ "$(cat "$TMP/keep.info")" = keep ] && ! ls "$TMP" | grep -q '^keep.info.tmp'; then
	ok "lcov: a failed run leaves the old file and no temporary"
else
	nok "lcov: a failed run leaves the old file and no temporary" "$(ls "$TMP")"
fi
expect_rc "lcov: no symbols: nothing to write (exit 2)" 2 $EFIPT coverage --pt "$TMP/t.pt" $PE --format lcov -o "$TMP/n.info"
contains "lcov: an image without symbols named" "$TMP/err" "efipt.efi: no symbol file, not in the tracefile"
contains "lcov: no symbols: nothing written, said" "$TMP/err" "nothing to write to $TMP/n.info"
[ ! -e "$TMP/n.info" ] && ok "lcov: no symbols: no empty tracefile" || nok "lcov: no symbols: no empty tracefile" "$(ls -l "$TMP/n.info")"
expect_rc "lcov: --help" 0 $EFIPT coverage --format lcov --help
contains "lcov: --help names --source-map" "$TMP/out" "--source-map OLD=NEW"
