# Counts and stacks against the independent reference (tests/cli/stack_ref.py:
# readelf and objdump, one step per instruction); sourced after tests/lib.sh.
# stack_check NAME PE ELF IMAGE SYMBOLS SYNTH-OPTIONS...: a trace synthesized
# over PE (--pe FILE:$BASE) whose listing (efipt insn) must be the ground
# truth; efipt top and flame with --symbols SYMBOLS must equal what the
# reference computes from ELF for IMAGE. Leaves $TMP/t.lst and $TMP/flame;
# returns 1 when the listing already differs.
stack_check() {
	name=$1 spe=$2 elf=$3 image=$4 syms=$5
	shift 5
	flags=""
	case "$*" in *--distnt*) flags="--distnt --disretc" ;; esac
	$EFIPT synth --out "$TMP/t.pt" --truth "$TMP/t.truth" $spe --insns 60000 "$@" 2>/dev/null
	$EFIPT insn --pt "$TMP/t.pt" $spe --no-inst $flags >"$TMP/t.lst"
	if [ -z "$flags" ] && ! grep -v '^\[' "$TMP/t.lst" | cmp -s - "$TMP/t.truth"; then
		nok "$name: decoder listing is the ground truth" "differs"
		return 1
	fi
	python3 tests/cli/stack_ref.py "$elf" $BASE "$image" "$TMP/t.lst" "$TMP/ref.csv" "$TMP/ref.folded"
	$EFIPT top --pt "$TMP/t.pt" $spe $flags --symbols "$syms" --format csv >"$TMP/top.csv"
	if [ "$(tail -n +2 "$TMP/top.csv" | sort)" = "$(tail -n +2 "$TMP/ref.csv" | sort)" ] &&
	   [ "$(head -1 "$TMP/top.csv")" = "image,function,excl,incl,calls" ] &&
	   [ "$(wc -l <"$TMP/ref.csv")" -gt 1 ]; then
		ok "$name: top equals the reference"
	else
		nok "$name: top equals the reference" "$(diff "$TMP/ref.csv" "$TMP/top.csv" | head -5)"
	fi
	$EFIPT flame --pt "$TMP/t.pt" $spe $flags --symbols "$syms" >"$TMP/flame"
	if [ "$(sort "$TMP/flame")" = "$(sort "$TMP/ref.folded")" ]; then
		ok "$name: flame equals the reference"
	else
		nok "$name: flame equals the reference" "$(diff "$TMP/ref.folded" "$TMP/flame" | head -3 | cut -c1-200)"
	fi
}
