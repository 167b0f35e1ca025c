# efipt symbols, top and flame on real build output: efipt.efi and the
# gnu-efi ELF it was made from (build/efipt.so, with DWARF), traced by the
# synthesizer. Counts and stacks must equal what an independent reference
# (tests/cli/stack_ref.py: readelf and objdump, one step per instruction)
# computes from the trace's instruction sequence; a symbol file that is
# missing, truncated, stripped or from another build is named, never used.
. tests/lib.sh
. tests/cli/lib_stack.sh
build_output symbols

# --- matching ---------------------------------------------------------------
expect_rc "symbols: base name under --symbols FILE" 0 $EFIPT symbols $PE --symbols "$SO"
contains "symbols: the file used is named" "$TMP/out" "symbols: $SO"
contains "symbols: matched by base name" "$TMP/out" "matched by: base name"
contains "symbols: code checked against the image" "$TMP/out" "code: equal to the image"
contains "symbols: DWARF found" "$TMP/out" "(DWARF, lines)"

mkdir -p "$TMP/tree/a/b" "$TMP/c"
cp "$SO" "$TMP/tree/a/b/efipt.so"
expect_rc "symbols: directory searched recursively" 0 $EFIPT symbols $PE --symbols "$TMP/tree"
contains "symbols: found deep in the tree" "$TMP/out" "symbols: $TMP/tree/a/b/efipt.so"

# the CodeView path an image records, moved with --path-map
cat >"$TMP/images.json" <<EOM
{"images": [{"name": "efipt.efi", "base": "$BASE", "size": 364544, "pdb": "/old/build/efipt.so"}]}
EOM
expect_rc "symbols: recorded path with --path-map" 0 $EFIPT symbols $PE --images "$TMP/images.json" --path-map "/old/build=$TMP/tree/a/b"
contains "symbols: matched by codeview path" "$TMP/out" "matched by: codeview path"
expect_rc "symbols: wrong --path-map" 0 $EFIPT symbols $PE --images "$TMP/images.json" --path-map "/old/build=$TMP/nowhere"
contains "symbols: wrong --path-map named" "$TMP/out" "$TMP/nowhere/efipt.so: recorded build path not found (after --path-map)"
contains "symbols: no symbols then" "$TMP/out" "symbols: none"
expect_rc "symbols: --path-map without =" 2 $EFIPT symbols $PE --path-map /old
contains "symbols: --path-map syntax named" "$TMP/err" "--path-map wants OLD=NEW"
expect_rc "symbols: --path-map with an empty NEW" 2 $EFIPT symbols $PE --path-map /old=
contains "symbols: --path-map empty NEW named" "$TMP/err" "neither empty"

# an image booted under another name (efipt.efi as BOOTX64.EFI): its
# symbol file given with --symbols IMAGE=FILE, still checked by its code
cp "$EFI" "$TMP/BOOTX64.EFI"
expect_rc "symbols: another name, by base name: none" 0 $EFIPT symbols --pe "$TMP/BOOTX64.EFI:$BASE" --symbols "$SO"
contains "symbols: another name: no symbols by base name" "$TMP/out" "symbols: none"
expect_rc "symbols: --symbols IMAGE=FILE" 0 $EFIPT symbols --pe "$TMP/BOOTX64.EFI:$BASE" --symbols "bootx64.efi=$SO"
contains "symbols: IMAGE=FILE used" "$TMP/out" "symbols: $SO"
contains "symbols: IMAGE=FILE said" "$TMP/out" "matched by: --symbols IMAGE=FILE"
contains "symbols: IMAGE=FILE checked" "$TMP/out" "code: equal to the image"
$EFIPT synth --pe "$TMP/BOOTX64.EFI:$BASE" --out "$TMP/boot.pt" --insns 20000 2>/dev/null
expect_rc "top: --symbols IMAGE=FILE" 0 $EFIPT top --pt "$TMP/boot.pt" --pe "$TMP/BOOTX64.EFI:$BASE" --symbols "BOOTX64=$SO" --format csv
if grep -q "^\"BOOTX64.EFI\",\"efi_main\"" "$TMP/out"; then ok "top: --symbols IMAGE=FILE names the functions"; else nok "top: --symbols IMAGE=FILE names the functions" "$(head -5 "$TMP/out")"; fi
expect_rc "symbols: IMAGE=FILE that is another build: refused" 0 $EFIPT symbols --pe "$TMP/BOOTX64.EFI:$BASE" --symbols "BOOTX64=/usr/lib/x86_64-linux-gnu/libc.so.6"
contains "symbols: IMAGE=FILE refused: no symbols" "$TMP/out" "symbols: none"
contains "symbols: IMAGE=FILE refused: said" "$TMP/out" "(--symbols BOOTX64=/usr/lib/x86_64-linux-gnu/libc.so.6) is not used"
expect_rc "symbols: IMAGE=FILE naming no image" 0 $EFIPT symbols --pe "$TMP/BOOTX64.EFI:$BASE" --symbols "Other=$SO"
contains "symbols: IMAGE=FILE naming no image: said" "$TMP/err" "--symbols Other=$SO: no traced image is named Other"

# what a file that is no symbol file is, said once even when found twice
mkdir -p "$TMP/junk"
printf 'hello' >"$TMP/junk/efipt.debug"
cp "$EFI" "$TMP/junk/efipt.so"
expect_rc "symbols: files that are no ELF" 0 $EFIPT symbols $PE --symbols "$TMP/junk" --symbols "$TMP/junk/"
contains "symbols: a text file named for what it is" "$TMP/out" "efipt.debug: not an ELF file (it starts with 68 65 6c 6c)"
contains "symbols: a PE named for what it is" "$TMP/out" "efipt.so: a PE image, not its symbols"
n=$(grep -c "efipt.debug: not an ELF" "$TMP/out")
[ "$n" = 1 ] && ok "symbols: a note once, though the file was found twice" || nok "symbols: a note once" "$n times: $(cat "$TMP/out")"
if grep -q "no error" "$TMP/out"; then nok "symbols: no '(no error)' as a reason" "$(cat "$TMP/out")"; else ok "symbols: no '(no error)' as a reason"; fi

# PDB paths (MSVC/CLANGPDB builds) are not supported: said, not guessed
sed 's|/old/build/efipt.so|C:\\\\build\\\\efipt.pdb|' "$TMP/images.json" >"$TMP/pdb.json"
expect_rc "symbols: PDB path" 0 $EFIPT symbols $PE --images "$TMP/pdb.json"
contains "symbols: PDB not supported said" "$TMP/out" "PDB symbols (MSVC/CLANGPDB builds) are not supported"

# another build: one code byte changed (not at a relocation site)
off=$(readelf -SW "$SO" | sed -n 's/.* \.text  *PROGBITS  *[0-9a-f]*  *\([0-9a-f]*\) .*/\1/p')
cp "$SO" "$TMP/c/efipt.so"
python3 - "$TMP/c/efipt.so" $((0x$off + 0x200)) <<'EOP'
import sys
p, at = sys.argv[1], int(sys.argv[2])
d = bytearray(open(p, "rb").read())
d[at] ^= 0xff
open(p, "wb").write(d)
EOP
expect_rc "symbols: other build" 0 $EFIPT symbols $PE --symbols "$TMP/c/efipt.so"
contains "symbols: mismatch named with file and place" "$TMP/out" "$TMP/c/efipt.so: code differs from the image at .text+0x200"
contains "symbols: mismatch not used" "$TMP/out" "symbols: none"
$EFIPT synth --out "$TMP/s.pt" --truth "$TMP/s.truth" $PE --insns 20000 --seed 5 2>/dev/null
expect_rc "top: mismatched symbols" 0 $EFIPT top --pt "$TMP/s.pt" $PE --symbols "$TMP/c/efipt.so" --format csv
if grep -v '^image,' "$TMP/out" | grep -qv '"efipt.efi","\[unknown\]"'; then
	nok "top: no names from a mismatched file" "$(head -3 "$TMP/out")"
else
	ok "top: no names from a mismatched file"
fi
contains "top: symbols given but none used: said, with the image's reason" "$TMP/err" \
	"efipt top: note: --symbols gave no image its symbols (efipt.efi: $TMP/c/efipt.so: code differs from the image at .text+0x200"
$EFIPT top --pt "$TMP/s.pt" $PE --symbols "$SO" >/dev/null 2>"$TMP/err"
if grep -q "gave no image its symbols" "$TMP/err"; then nok "top: symbols used: no note" "$(cat "$TMP/err")"; else ok "top: symbols used: no note"; fi

# another build whose changed byte is near a relocation but in no field a
# loader rewrites: the EDK2 fixture's ELF (linked with --emit-relocs) has
# .rela.debug_info, whose offsets are .debug_info's, not addresses, and
# .rela.text's 4-byte PC32 fields; a byte 0-7 past a debug offset, and one
# 5 past a PC32 site, are code and must be compared
FD=tests/data/edk2/Build/EfiptFixture/DEBUG_GCC5/X64/EfiptFixturePkg/App/FixtureApp/DEBUG
mkdir -p "$TMP/r1" "$TMP/r2"
python3 - "$FD/FixtureApp.debug" "$TMP/r1/FixtureApp.debug" "$TMP/r2/FixtureApp.debug" >"$TMP/rel" <<'EOP'
import re, subprocess, sys
elf, out1, out2 = sys.argv[1:4]
sec = {}
for l in subprocess.run(["readelf", "-SW", elf], capture_output=True, text=True).stdout.splitlines():
    m = re.match(r"\s*\[\s*\d+\]\s+(\S+)\s+\S+\s+([0-9a-f]+)\s+([0-9a-f]+)\s+([0-9a-f]+)", l)
    if m:
        sec[m.group(1)] = [int(x, 16) for x in m.group(2, 3, 4)]
text, dbg, cur = [], [], None
for l in subprocess.run(["readelf", "-rW", elf], capture_output=True, text=True).stdout.splitlines():
    m = re.match(r"Relocation section '(\S+)'", l)
    if m:
        cur = m.group(1)
        continue
    f = l.split()
    if len(f) > 2 and re.fullmatch(r"[0-9a-f]{16}", f[0]):
        (text if cur == ".rela.text" else dbg if cur.startswith(".rela.debug") else []).append((int(f[0], 16), f[2]))
va, off, size = sec[".text"]
covered = {a + k for a, t in text for k in range(8 if t == "R_X86_64_64" else 4)}
near_dbg = {a + k for a, _ in dbg for k in range(8)}
x1 = next(x for x in range(va, va + size) if x in near_dbg and x not in covered)
x2 = next(a + 5 for a, t in text if t == "R_X86_64_PC32" and a + 5 not in covered and va <= a + 5 < va + size)
d = open(elf, "rb").read()
for out, x in ((out1, x1), (out2, x2)):
    b = bytearray(d)
    b[x - va + off] ^= 0xff
    open(out, "wb").write(b)
    print("0x%x" % x)
EOP
for k in 1 2; do
	x=$(sed -n ${k}p "$TMP/rel")
	expect_rc "symbols: changed byte near a relocation ($k: RVA $x)" 0 $EFIPT symbols --pe "$FD/FixtureApp.efi" --symbols "$TMP/r$k/FixtureApp.debug"
	contains "symbols: changed byte near a relocation ($k) is another build" "$TMP/out" "code differs from the image at .text+"
	contains "symbols: changed byte near a relocation ($k) not used" "$TMP/out" "symbols: none"
done
expect_rc "symbols: the fixture's own ELF" 0 $EFIPT symbols --pe "$FD/FixtureApp.efi" --symbols "$FD/FixtureApp.debug"
contains "symbols: the fixture's own ELF equal" "$TMP/out" "code: equal to the image"

head -c 3000 "$SO" >"$TMP/c/trunc.so"
cp "$TMP/c/trunc.so" "$TMP/c/efipt.so"
expect_rc "symbols: truncated file" 0 $EFIPT symbols $PE --symbols "$TMP/c/efipt.so"
contains "symbols: truncated file named" "$TMP/out" "note: $TMP/c/efipt.so: "
contains "symbols: truncated file not used" "$TMP/out" "symbols: none"

objcopy --strip-all -R .dynsym -R .dynstr "$SO" "$TMP/c/efipt.so"
expect_rc "symbols: stripped file" 0 $EFIPT symbols $PE --symbols "$TMP/c/efipt.so"
contains "symbols: stripped file named" "$TMP/out" "$TMP/c/efipt.so: no functions (no DWARF, no .symtab: a stripped file)"

# a stripped file whose .gnu_debuglink names the full one
mkdir -p "$TMP/dl"
cp "$SO" "$TMP/dl/efipt-full.debug"
objcopy --strip-all --add-gnu-debuglink="$TMP/dl/efipt-full.debug" "$SO" "$TMP/dl/efipt.so"
expect_rc "symbols: gnu_debuglink" 0 $EFIPT symbols $PE --symbols "$TMP/dl"
contains "symbols: matched by gnu_debuglink" "$TMP/out" "matched by: gnu_debuglink"
contains "symbols: the debuglink file used" "$TMP/out" "symbols: $TMP/dl/efipt-full.debug"

expect_rc "symbols: missing --symbols path" 2 $EFIPT symbols $PE --symbols "$TMP/none"
contains "symbols: missing path named" "$TMP/err" "--symbols $TMP/none: not a directory or a file"
expect_rc "symbols: no symbols given" 0 $EFIPT symbols $PE
contains "symbols: what is missing said" "$TMP/out" "no symbol file for efipt: give its build directory or file with --symbols"

# --lookup: function and line, as binutils' addr2line has them
fa=$(nm "$SO" | awk '$3 == "efi_main" { print $1 }')
a=$(printf '0x%x' $((BASE + 0x$fa + 4)))
$EFIPT symbols $PE --symbols "$SO" --lookup $a >"$TMP/out" 2>&1
want=$(addr2line -e "$SO" $(printf '0x%x' $((0x$fa + 4))))
contains "symbols: --lookup function" "$TMP/out" "efipt.efi\`efi_main+0x4"
contains "symbols: --lookup line as addr2line" "$TMP/out" "$(basename "${want%% *}")"

# --- counts and stacks against the reference ----------------------------------
# reference input: the decoder's listing (instructions and events); its
# instructions must be the synthesizer's ground truth
check_trace() {
	name=$1
	shift
	stack_check "$name" "$PE" "$SO" efipt.efi "$SO" "$@" || return
	n=$(grep -vc '^\[' "$TMP/t.lst")
	s=$(awk '{ s += $NF } END { print s + 0 }' "$TMP/flame")
	[ "$n" = "$s" ] && ok "$name: flame counts every instruction once" || nok "$name: flame counts every instruction once" "$s of $n"
}
check_trace "stack: plain" --seed 3
check_trace "stack: interrupts" --seed 4 --interrupts 300
check_trace "stack: overflows" --seed 5 --ovf 300
check_trace "stack: disables" --seed 6 --disable 3000
check_trace "stack: DisRETC" --seed 7 --disretc
check_trace "stack: DisTNT gaps" --seed 8 --distnt --disretc
check_trace "stack: everything" --seed 9 --interrupts 200 --ovf 200 --disable 2000

# --inline: inline frames from DWARF against binutils' addr2line -i -f (an
# independent DWARF reader) over the same flows
check_inline() {
	name=$1
	shift
	flags=""
	case "$*" in *--distnt*) flags="--distnt --disretc" ;; esac
	$EFIPT synth --out "$TMP/i.pt" $PE --insns 60000 "$@" 2>/dev/null
	$EFIPT insn --pt "$TMP/i.pt" $PE --no-inst $flags >"$TMP/i.lst"
	python3 tests/cli/stack_ref.py "$SO" $BASE efipt.efi "$TMP/i.lst" "$TMP/iref.csv" \
		"$TMP/iref.folded" --inline
	if ! grep -q ' \[inlined\]' "$TMP/iref.folded"; then
		nok "$name: the trace runs inlined code" "no inline frame in the reference"
		return
	fi
	$EFIPT top --pt "$TMP/i.pt" $PE $flags --symbols "$SO" --format csv --inline >"$TMP/itop.csv"
	if [ "$(tail -n +2 "$TMP/itop.csv" | sort)" = "$(tail -n +2 "$TMP/iref.csv" | sort)" ]; then
		ok "$name: top --inline equals the reference"
	else
		nok "$name: top --inline equals the reference" "$(diff "$TMP/iref.csv" "$TMP/itop.csv" | head -5)"
	fi
	$EFIPT flame --pt "$TMP/i.pt" $PE $flags --symbols "$SO" --inline >"$TMP/iflame"
	if [ "$(sort "$TMP/iflame")" = "$(sort "$TMP/iref.folded")" ]; then
		ok "$name: flame --inline equals the reference"
	else
		nok "$name: flame --inline equals the reference" "$(diff "$TMP/iref.folded" "$TMP/iflame" | head -3 | cut -c1-200)"
	fi
	# calls --inline enters every stack the reference has instructions in
	$EFIPT calls --pt "$TMP/i.pt" $PE $flags --symbols "$SO" --inline --index >"$TMP/icalls"
	if python3 tests/cli/calls_paths.py "$TMP/icalls" "$TMP/iref.folded" >"$TMP/icalls.chk"; then
		ok "$name: calls --inline enters the reference's stacks"
	else
		nok "$name: calls --inline enters the reference's stacks" "$(head -3 "$TMP/icalls.chk" | cut -c1-200)"
	fi
	# without --inline, inlined code counts for the concrete function
	$EFIPT top --pt "$TMP/i.pt" $PE $flags --symbols "$SO" --format csv >"$TMP/ctop.csv"
	if grep -q 'inlined' "$TMP/ctop.csv"; then
		nok "$name: without --inline no inline frames" "$(grep inlined "$TMP/ctop.csv" | head -2)"
	else
		ok "$name: without --inline no inline frames"
	fi
}
check_inline "inline: plain" --seed 3
check_inline "inline: interrupts" --seed 4 --interrupts 300
check_inline "inline: everything" --seed 9 --interrupts 200 --ovf 200 --disable 2000
check_inline "inline: DisTNT gaps" --seed 8 --distnt --disretc

# jsonl rows
$EFIPT top --pt "$TMP/t.pt" $PE --symbols "$SO" --format jsonl >"$TMP/top.jsonl"
if python3 -c '
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
assert rows and all(set(r) == {"image", "function", "excl", "incl", "calls"} for r in rows)
assert all(r["incl"] >= r["excl"] or r["function"] == "[unknown]" for r in rows)
' "$TMP/top.jsonl"; then ok "top: jsonl rows"; else nok "top: jsonl rows" "$(head -2 "$TMP/top.jsonl")"; fi
expect_rc "top: bad --format" 2 $EFIPT top --pt "$TMP/t.pt" $PE --format xml
contains "top: bad --format named" "$TMP/err" "--format takes text, jsonl or csv, not 'xml'"
expect_rc "top: --by image" 0 $EFIPT top --pt "$TMP/t.pt" $PE --by image
contains "top: --by image lists the image" "$TMP/out" "100.00%  efipt.efi"
expect_rc "top: no trace" 2 $EFIPT top $PE
contains "top: no trace said" "$TMP/err" "no trace: give a run directory or --pt TRACE"

# --- a run directory: efipt.efi relocated in a memory snapshot ----------------
D=$TMP/run
mkdir -p "$D"
python3 tests/cli/pe_snapshot.py "$EFI" $BASE "$D/mem-0000000001000000.bin" >"$TMP/pages"
pages=$(( $(cat "$TMP/pages") / 4096 ))
$EFIPT synth --out "$D/trace.pt" --raw "$D/mem-0000000001000000.bin:$BASE" --start $((BASE + 0x$fa)) --insns 20000 --seed 2 2>/dev/null
cat >"$D/memmap.json" <<EOM
{"regions": [{"type": "LoaderCode", "phys": "$BASE", "pages": $pages, "attr": "0xf", "snapshot": "mem-0000000001000000.bin"}]}
EOM
cat >"$D/images.json" <<EOM
{"images": [{"name": "efipt.efi", "base": "$BASE", "size": 364544, "code_type": "LoaderCode", "path": "", "pdb": "/build/elsewhere/efipt.so"}]}
EOM
run_manifest "$D" trace.pt memmap.json images.json mem-0000000001000000.bin
expect_rc "run dir: symbols" 0 $EFIPT symbols "$D" --path-map /build/elsewhere="$(dirname "$SO")"
contains "run dir: matched by the recorded path" "$TMP/out" "matched by: codeview path"
contains "run dir: checked against the snapshot" "$TMP/out" "code: equal to the image"
expect_rc "run dir: top" 0 $EFIPT top "$D" --symbols "$SO"
contains "run dir: top names efi_main" "$TMP/out" "efipt.efi\`efi_main"
expect_rc "run dir: decode --symbols" 0 $EFIPT decode "$D" --symbols "$SO" --top 5
contains "run dir: decode keeps its summary" "$TMP/out" "efipt.efi"
contains "run dir: decode adds the top functions" "$TMP/out" "top functions:"
sed -n '/^top functions:$/,$p' "$TMP/out" | tail -n +2 >"$TMP/dtop"
# with symbols, the summary's counts come from the model's functions
sed '/^top functions:$/,$d' "$TMP/out" | sed '$d' >"$TMP/dsum_sym"
$EFIPT decode "$D" >"$TMP/dsum" 2>&1
if cmp -s "$TMP/dsum" "$TMP/dsum_sym"; then ok "run dir: decode's summary is the same with symbols"; else nok "run dir: decode's summary is the same with symbols" "$(diff "$TMP/dsum" "$TMP/dsum_sym" | head -3)"; fi
$EFIPT top "$D" --symbols "$SO" --limit 5 >"$TMP/top5"
if [ -s "$TMP/dtop" ] && cmp -s "$TMP/dtop" "$TMP/top5"; then ok "run dir: decode's functions are efipt top's"; else nok "run dir: decode's functions are efipt top's" "$(head -3 "$TMP/dtop")"; fi

# --- an ELF with .symtab only: a chain of 1100 nested calls -------------------
# deeper than the model's 1024 frames: the stack is cut, and returns then
# run off its bottom (this once read below the stack)
python3 -c '
n = 1100
print(".text")
for k in range(n):
    print(".globl f%d\n.type f%d,@function\nf%d:" % (k, k, k))
    if k + 1 < n:
        print("  call f%d" % (k + 1))
    print("  ret\n.size f%d,.-f%d" % (k, k))
' >"$TMP/deep.s"
if as -o "$TMP/deep.o" "$TMP/deep.s" && ld -o "$TMP/deep.elf" -Ttext=0x401000 -e f0 "$TMP/deep.o"; then
	DE="--elf $TMP/deep.elf"
	$EFIPT synth --out "$TMP/d.pt" $DE --insns 10000 2>/dev/null
	expect_rc "deep: symbols from .symtab" 0 $EFIPT symbols $DE
	contains "deep: .symtab functions" "$TMP/out" "functions: 1100 (.symtab only, no lines)"
	contains "deep: the ELF names itself" "$TMP/out" "matched by: the image file itself"
	expect_rc "deep: top" 0 $EFIPT top --pt "$TMP/d.pt" $DE
	contains "deep: stacks cut" "$TMP/out" "stacks cut at 1024 frames"
	$EFIPT insn --pt "$TMP/d.pt" $DE --no-inst >"$TMP/d.lst"
	python3 tests/cli/stack_ref.py "$TMP/deep.elf" 0 deep.elf "$TMP/d.lst" "$TMP/ref.csv" "$TMP/ref.folded"
	$EFIPT top --pt "$TMP/d.pt" $DE --format csv >"$TMP/top.csv"
	if [ "$(tail -n +2 "$TMP/top.csv" | sort)" = "$(tail -n +2 "$TMP/ref.csv" | sort)" ]; then
		ok "deep: top equals the reference"
	else
		nok "deep: top equals the reference" "$(diff "$TMP/ref.csv" "$TMP/top.csv" | head -5)"
	fi
	expect_rc "deep: flame" 0 $EFIPT flame --pt "$TMP/d.pt" $DE
	if [ "$(sort "$TMP/out")" = "$(sort "$TMP/ref.folded")" ]; then
		ok "deep: flame equals the reference"
	else
		nok "deep: flame equals the reference" "$(diff "$TMP/ref.folded" "$TMP/out" | head -3 | cut -c1-200)"
	fi
else
	nok "deep: test ELF" "as/ld failed"
fi

# --- efipt calls ----------------------------------------------------------------
$EFIPT synth --out "$TMP/c.pt" $PE --insns 20000 --seed 4 --interrupts 100 2>/dev/null
expect_rc "calls: runs" 0 $EFIPT calls --pt "$TMP/c.pt" $PE --symbols "$SO"
cp "$TMP/out" "$TMP/calls"
# every call, tail call and interrupt top counts is one line here
n=$(grep -cv -e '(root)' -e '(jump)' -e '(unknown caller)' -e '-- gap --' "$TMP/calls")
$EFIPT top --pt "$TMP/c.pt" $PE --symbols "$SO" --format csv >"$TMP/top.csv"
m=$(awk -F, 'NR > 1 { s += $NF } END { print s + 0 }' "$TMP/top.csv")
[ "$n" -gt 0 ] && [ "$n" = "$m" ] && ok "calls: one line per call top counts" || nok "calls: one line per call top counts" "$n lines, $m calls"
contains "calls: a DWARF function named" "$TMP/calls" "efipt.efi\`efi_main"
# without symbols: Image+0xRVA of the entry
$EFIPT calls --pt "$TMP/c.pt" $PE >"$TMP/nosym"
contains "calls: Image+0xRVA without symbols" "$TMP/nosym" "efipt.efi+0x$(printf '%x' $((0x$fa)))"
# --function: only frames under it, it at the left
$EFIPT calls --pt "$TMP/c.pt" $PE --symbols "$SO" --function sb_vprintf --depth 2 >"$TMP/f"
if [ -s "$TMP/f" ] && awk '
	/^ *[0-9]+  [^ ]/ { if ($2 != "efipt.efi`sb_vprintf") bad = 1; next }
	/^ *[0-9]+    [^ ]/ { next }
	{ bad = 1 } END { exit bad }' "$TMP/f"; then
	ok "calls: --function NAME --depth 2"
else
	nok "calls: --function NAME --depth 2" "$(head -5 "$TMP/f")"
fi
# a --function, --image or range that can select nothing is said, not an
# empty call trace with exit 0
expect_rc "calls: --function that names no function: exit 2" 2 $EFIPT calls --pt "$TMP/c.pt" $PE --symbols "$SO" --function NoSuchFunction
contains "calls: --function that names no function: said" "$TMP/err" "--function NoSuchFunction: no function of that name in the symbols of the traced images"
expect_rc "calls: --function IMAGE\`NAME of no image: exit 2" 2 $EFIPT calls --pt "$TMP/c.pt" $PE --symbols "$SO" --function 'Other.efi`efi_main'
contains "calls: no such image said" "$TMP/err" "no traced image is named Other.efi"
expect_rc "calls: --image that names no image: exit 2" 2 $EFIPT calls --pt "$TMP/c.pt" $PE --symbols "$SO" --image Nope.efi
contains "calls: --image of no image said" "$TMP/err" "--image Nope.efi: no traced image has that name"
expect_rc "calls: --from 100 --to 50: exit 2" 2 $EFIPT calls --pt "$TMP/c.pt" $PE --symbols "$SO" --from 100 --to 50
contains "calls: an empty range said" "$TMP/err" "--from 100 --to 50: no instruction index is in [from, to)"
expect_rc "calls: a function that never ran: exit 0" 0 $EFIPT calls --pt "$TMP/c.pt" $PE --symbols "$SO" --function ptcfg_validate
if [ ! -s "$TMP/out" ] && grep -q "ptcfg_validate: it never ran in the trace" "$TMP/err"; then ok "calls: a function that never ran: said"; else nok "calls: a function that never ran: said" "$(head -c 300 "$TMP/out") / $(cat "$TMP/err")"; fi
$EFIPT calls --pt "$TMP/c.pt" $PE --symbols "$SO" --lines --function efi_main --depth 1 >"$TMP/l"
want=$(addr2line -e "$SO" 0x$fa)
contains "calls: --lines as addr2line" "$TMP/l" "$(basename "${want%% *}")"
$EFIPT calls --pt "$TMP/c.pt" $PE --symbols "$SO" --from 1000 --to 2000 >"$TMP/w"
if [ -s "$TMP/w" ] && awk '$1 < 1000 || $1 >= 2000 { exit 1 }' "$TMP/w"; then ok "calls: --from/--to window"; else nok "calls: --from/--to window" "$(head -3 "$TMP/w")"; fi
expect_rc "calls: bad --depth" 2 $EFIPT calls --pt "$TMP/c.pt" $PE --depth x
contains "calls: bad --depth named" "$TMP/err" "--depth takes a number, not 'x'"

# --- damaged symbol files: named, never a crash or a hang ----------------------------
python3 - "$SO" "$TMP/mut" <<'EOP'
import os, random, sys
d = open(sys.argv[1], "rb").read()
r = random.Random(1)
for i in range(24):
    b = bytearray(d)
    for k in range(r.choice([1, 4, 16, 64])):
        where = r.choice(["shdr", "tail", "any"])
        at = (len(b) - r.randrange(1, 64 * 40) if where == "shdr" else
              r.randrange(len(b) // 2, len(b)) if where == "tail" else r.randrange(len(b)))
        b[at] = r.randrange(256)
    os.makedirs("%s/%d" % (sys.argv[2], i))
    open("%s/%d/efipt.so" % (sys.argv[2], i), "wb").write(b)
EOP
bad=""
for d in "$TMP"/mut/*; do
	timeout 30 $EFIPT symbols $PE --symbols "$d/efipt.so" --lookup 0x1001000 >"$TMP/out" 2>&1
	rc=$?
	if [ $rc -ne 0 ] || ! grep -qF -e "symbols: $d/efipt.so" -e "note: $d/efipt.so" "$TMP/out"; then
		bad="$bad $(basename "$d"):$rc"
	fi
done
[ -z "$bad" ] && ok "symbols: 24 damaged files named or used, no crash" || nok "symbols: 24 damaged files named or used, no crash" "$bad"

# a trace with no PSB: said, exit status 1, as efipt insn
head -c 100 /dev/zero | tr '\0' '\1' >"$TMP/nopsb.pt"
expect_rc "top: trace without PSB" 1 $EFIPT top --pt "$TMP/nopsb.pt" $PE
contains "top: no PSB said" "$TMP/err" "nopsb.pt"

# EDK2's layout: the image records .../NAME.dll; the DWARF is in NAME.debug beside it
mkdir -p "$TMP/edk2/X64"
cp "$SO" "$TMP/edk2/X64/efipt.debug"
cat >"$TMP/edk2.json" <<EOM
{"images": [{"name": "efipt.efi", "base": "$BASE", "size": 364544, "pdb": "C:\\\\b\\\\X64\\\\efipt.dll"}]}
EOM
expect_rc "symbols: EDK2 NAME.dll -> NAME.debug" 0 $EFIPT symbols $PE --images "$TMP/edk2.json" --path-map "C:/b=$TMP/edk2"
contains "symbols: NAME.debug beside the recorded NAME.dll" "$TMP/out" "symbols: $TMP/edk2/X64/efipt.debug"
contains "symbols: NAME.debug matched by the recorded path" "$TMP/out" "matched by: codeview path"

# two candidates of the same name: the other build is named, the right one used
mkdir -p "$TMP/two/a" "$TMP/two/b"
cp "$SO" "$TMP/two/b/efipt.so"
python3 - "$SO" "$TMP/two/a/efipt.so" $((0x$off + 0x300)) <<'EOP'
import sys
d = bytearray(open(sys.argv[1], "rb").read())
d[int(sys.argv[3])] ^= 0x55
open(sys.argv[2], "wb").write(d)
EOP
expect_rc "symbols: two candidates" 0 $EFIPT symbols $PE --symbols "$TMP/two"
contains "symbols: the matching candidate used" "$TMP/out" "symbols: $TMP/two/b/efipt.so"
contains "symbols: the other build named" "$TMP/out" "$TMP/two/a/efipt.so: code differs from the image at .text+0x300"

# getopt's messages carry the efipt prefix; a write error is reported, exit 2
for cmd in symbols top flame calls; do
	$EFIPT $cmd --bogus >/dev/null 2>"$TMP/err"
	if head -1 "$TMP/err" | grep -q "^efipt $cmd: unrecognized option '--bogus'"; then ok "$cmd: getopt message prefixed"; else nok "$cmd: getopt message prefixed" "$(head -1 "$TMP/err")"; fi
	$EFIPT $cmd --help >"$TMP/help"
	contains "$cmd --help: exit status" "$TMP/help" "Exit status: 0"
done
for cmd in top flame calls; do
	$EFIPT $cmd --pt "$TMP/t.pt" $PE --symbols "$SO" >/dev/full 2>"$TMP/err"
	rc=$?
	[ "$rc" -eq 2 ] && ok "$cmd: /dev/full exits 2" || nok "$cmd: /dev/full exits 2" "exit $rc"
	contains "$cmd: write error named" "$TMP/err" "efipt $cmd: write error on standard output"
done

# a FIFO where a symbol file would be: refused, never waited on
mkdir -p "$TMP/fifo"
mkfifo "$TMP/fifo/efipt.so"
expect_rc "symbols: FIFO in the tree" 0 timeout 20 $EFIPT symbols $PE --symbols "$TMP/fifo"
contains "symbols: FIFO named" "$TMP/out" "$TMP/fifo/efipt.so: not a regular file"
