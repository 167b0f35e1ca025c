# Coverage and timeline on real EDK2 build output (tests/data/edk2: GCC5
# DEBUG builds of DxeCore and an application, .efi with .debug), traced by
# the synthesizer: the lcov tracefile's lines, functions and branches equal
# the reference's (tests/cli/lcov_ref.py: binutils' view of the .debug and
# the ground truth), the drcov module is named after the .efi and covers
# every executed instruction (tests/cli/drcov_check.py), genhtml renders the
# tracefile with the application's source, and the timeline passes
# tests/cli/timeline_check.py against efipt flame and top.
. tests/lib.sh
X64=tests/data/edk2/Build/EfiptFixture/DEBUG_GCC5/X64
DXE=$X64/MdeModulePkg/Core/Dxe/DxeMain/DEBUG/DxeCore
APP=$X64/EfiptFixturePkg/App/FixtureApp/DEBUG/FixtureApp
SYM="--symbols tests/data/edk2/Build"
BASE=0x7f000000
if [ ! -f "$DXE.efi" ] || [ ! -f "$APP.efi" ]; then
	nok "edk2: fixture" "tests/data/edk2 missing (make edk2-fixture)"
	exit 0
fi

# lcov NAME IMAGE SYNTH-OPTIONS...: the tracefile against the reference
lcov() {
	name=$1 im=$2
	shift 2
	bounds=""
	case "$*" in *--interrupts*) bounds=--bounds ;; esac
	$EFIPT synth --out "$TMP/t.pt" --truth "$TMP/t.truth" --pe "$im.efi:$BASE" --insns 60000 "$@" 2>/dev/null
	expect_rc "$name: written" 0 $EFIPT coverage --pt "$TMP/t.pt" --pe "$im.efi:$BASE" $SYM --format lcov -o "$TMP/t.info"
	r=$(python3 tests/cli/lcov_ref.py "$TMP/t.info" "$im.debug" $BASE "$TMP/t.truth" $bounds)
	case "$r" in ok*) ok "$name: lines, functions and branches equal the reference ($r)" ;; *) nok "$name: lines, functions and branches equal the reference" "$r" ;; esac
}
lcov "edk2: DxeCore" "$DXE" --seed 3
lcov "edk2: DxeCore, interrupts" "$DXE" --seed 4 --interrupts 200
lcov "edk2: FixtureApp" "$APP" --seed 3

# GCC's partial inlining: DWARF names CoreLocateProtocol.part.0 like the
# function; lcov knows functions by name, so each has its own
$EFIPT synth --out "$TMP/d.pt" --pe "$DXE.efi:$BASE" --insns 20000 --seed 3 2>/dev/null
$EFIPT coverage --pt "$TMP/d.pt" --pe "$DXE.efi:$BASE" $SYM --format lcov -o "$TMP/d.info" 2>/dev/null
contains "edk2: a clone named after its ELF symbol" "$TMP/d.info" "FN:575,CoreLocateProtocol.part.0"
contains "edk2: the function keeps its name" "$TMP/d.info" "FN:580,CoreLocateProtocol"
dup=$(awk -F, '/^SF:/ { delete seen } /^FN:/ { if (seen[$2]++) print $2 }' "$TMP/d.info" | head -3)
[ -z "$dup" ] && ok "edk2: every function name once per source file" || nok "edk2: every function name once per source file" "$dup"

# drcov: the module is the .efi a disassembler opens
$EFIPT synth --out "$TMP/t.pt" --truth "$TMP/t.truth" --pe "$DXE.efi:$BASE" --insns 60000 --seed 5 2>/dev/null
expect_rc "edk2: drcov written" 0 $EFIPT coverage --pt "$TMP/t.pt" --pe "$DXE.efi:$BASE" -o "$TMP/t.drcov"
r=$(python3 tests/cli/drcov_check.py "$TMP/t.drcov" --truth "$TMP/t.truth")
case "$r" in *drcov_check:*) nok "edk2: drcov covers every executed instruction" "$r" ;; *) ok "edk2: drcov covers every executed instruction" ;; esac
grep -a -q "^0, $(printf '0x%016x' $BASE), 0x[0-9a-f]*, 0x[0-9a-f]*, DxeCore.efi\$" "$TMP/t.drcov" &&
	ok "edk2: drcov module named DxeCore.efi" || nok "edk2: drcov module named DxeCore.efi" "$(head -c 300 "$TMP/t.drcov")"

# lcov 2 takes a function's lines to run from its FN record's line to the
# next one's and refuses a function that did not run while one of those
# lines did: DxeCore has functions that only run inlined (SplitTable), that
# also run inlined (EfiPagesToSize), whose parameter lines come before their
# entry's (CoreAddMemoryDescriptor: 550, entry on 556) and partial-inlining
# clones; these 60000 instructions were refused before each was handled.
# The sources are not here: stand-ins of as many lines take their place
$EFIPT coverage --pt "$TMP/t.pt" --pe "$DXE.efi:$BASE" $SYM --format lcov -o "$TMP/t.info" 2>/dev/null
src=$(sed -n 's|^SF:\(.*\)/MdeModulePkg/Core/Dxe/DxeMain/DxeMain.c$|\1|p' "$TMP/t.info" | head -1)
bld=$(sed -n 's|^SF:\(.*\)/Build/EfiptFixture/.*|\1|p' "$TMP/t.info" | head -1)
$EFIPT coverage --pt "$TMP/t.pt" --pe "$DXE.efi:$BASE" $SYM --format lcov -o "$TMP/t.info" \
	--source-map "$src=$TMP/edk2src" --source-map "$bld=$TMP/edk2build" 2>/dev/null
awk -F'[:,]' -v tmp="$TMP/" '/^SF:/ { f = $2 } /^(DA|FN|BRDA):/ && $2 > n[f] { n[f] = $2 }
	END { for (f in n) if (index(f, tmp) == 1) { system("mkdir -p \"$(dirname " f ")\"")
		for (i = 0; i <= n[f]; i++) print "/* " i " */" > f; close(f) } }' "$TMP/t.info"
. tests/cli/lcov2.sh
lcov2_renders "edk2: DxeCore" "$TMP/t.info"
grep -q "^FN:[0-9]*,SplitTable$" "$TMP/t.info" && ok "edk2: a function that only runs inlined has its FN record" ||
	nok "edk2: a function that only runs inlined has its FN record" "no FN for SplitTable"

# genhtml, with the application's source found through --source-map
$EFIPT synth --out "$TMP/a.pt" --pe "$APP.efi:$BASE" --insns 60000 --seed 3 2>/dev/null
$EFIPT coverage --pt "$TMP/a.pt" --pe "$APP.efi:$BASE" $SYM --format lcov -o "$TMP/a.info" 2>/dev/null
old=$(sed -n 's|^SF:\(.*\)/EfiptFixturePkg/App/FixtureApp.c$|\1|p' "$TMP/a.info" | head -1)
expect_rc "edk2: the application's tracefile" 0 $EFIPT coverage --pt "$TMP/a.pt" --pe "$APP.efi:$BASE" $SYM \
	--format lcov -o "$TMP/a.info" --source-map "$old=$(pwd)/tests/data/edk2"
contains "edk2: the application's source mapped" "$TMP/a.info" "SF:$(pwd)/tests/data/edk2/EfiptFixturePkg/App/FixtureApp.c"
if command -v genhtml >/dev/null; then
	# the MdePkg sources are not in the fixture: pages without source (lcov
	# 2, Debian 13's genhtml, wants --synthesize-missing for that too)
	miss=""
	genhtml --help 2>&1 | grep -q -- --synthesize-missing && miss=--synthesize-missing
	expect_rc "edk2: genhtml renders the tracefile" 0 genhtml -q --branch-coverage --ignore-errors source $miss -o "$TMP/html" "$TMP/a.info"
	page=$(find "$TMP/html" -name 'FixtureApp.c.gcov.html' | head -1)
	# a covered line's class: lineCov (lcov 1), tlaGNC and the like (lcov 2)
	if [ -n "$page" ] && grep -q 'FixtureChecksum' "$page" && grep -Eq 'lineCov|tla[GC][BN]C' "$page"; then
		ok "edk2: genhtml shows FixtureApp.c with its source"
	else
		nok "edk2: genhtml shows FixtureApp.c with its source" "no page, or no source in it"
	fi
else
	nok "edk2: genhtml renders the tracefile" "genhtml missing (Debian package lcov: mk/deps.sh)"
fi

# timeline: nesting, time and fields, against flame and top
$EFIPT synth --out "$TMP/t.pt" --pe "$DXE.efi:$BASE" --insns 60000 --seed 6 --interrupts 300 2>/dev/null
expect_rc "edk2: timeline written" 0 $EFIPT timeline --pt "$TMP/t.pt" --pe "$DXE.efi:$BASE" $SYM -o "$TMP/t.json"
$EFIPT flame --pt "$TMP/t.pt" --pe "$DXE.efi:$BASE" $SYM >"$TMP/t.folded" 2>/dev/null
$EFIPT top --pt "$TMP/t.pt" --pe "$DXE.efi:$BASE" $SYM --format csv >"$TMP/t.csv" 2>/dev/null
r=$(python3 tests/cli/timeline_check.py "$TMP/t.json" --flame "$TMP/t.folded" --top "$TMP/t.csv")
[ "$r" = ok ] && ok "edk2: timeline passes the checker" || nok "edk2: timeline passes the checker" "$r"
contains "edk2: timeline slices named by DxeCore's functions" "$TMP/t.json" '"name":"DxeCore.efi`CoreRaiseTpl"'
