# efipt symbols, top, calls and flame on real EDK2 build output: the
# committed fixture tests/data/edk2 (DxeCore, the WatchdogTimer DXE driver
# and an application built DEBUG with GCC5 from Debian's edk2 source; see
# its make_fixture.sh). Every way a symbol file is found (CodeView path with
# --path-map, base name, FvFile GUID through FV/Guid.xref, GNU ld .map as
# the last resort) and every way it is refused is named; traces synthesized
# over the images are named exactly as tests/cli/stack_ref.py computes from
# the ELF symbols.
. tests/lib.sh
. tests/cli/lib_stack.sh
FIX=tests/data/edk2/Build/EfiptFixture/DEBUG_GCC5
X64=$FIX/X64
APPD=$X64/EfiptFixturePkg/App/FixtureApp/DEBUG
WDTD=$X64/MdeModulePkg/Universal/WatchdogTimerDxe/WatchdogTimer/DEBUG
CORED=$X64/MdeModulePkg/Core/Dxe/DxeMain/DEBUG
APP_GUID=3D3F8E2A-6B1C-4E57-9A0D-5E1F7C2B4A61
OLD=$(cat "$FIX/build-path" 2>/dev/null)
BASE=0x1000000
APE="--pe $APPD/FixtureApp.efi:$BASE"
if [ -z "$OLD" ] || [ ! -f "$APPD/FixtureApp.debug" ] || [ ! -f "$CORED/DxeCore.efi" ]; then
	nok "edk2: fixture" "$FIX incomplete (tests/data/edk2/make_fixture.sh)"
	exit 0
fi

# --- matching ---------------------------------------------------------------
expect_rc "edk2: CodeView path with --path-map" 0 $EFIPT symbols $APE --path-map "$OLD=$FIX"
contains "edk2: the recorded .dll path shown" "$TMP/out" "recorded path: $OLD/X64/EfiptFixturePkg/App/FixtureApp/DEBUG/FixtureApp.dll"
contains "edk2: its sibling .debug used" "$TMP/out" "symbols: $APPD/FixtureApp.debug"
contains "edk2: matched by codeview path" "$TMP/out" "matched by: codeview path"
contains "edk2: DWARF of the real build" "$TMP/out" "(DWARF, lines)"
contains "edk2: code equal to the image" "$TMP/out" "code: equal to the image"

expect_rc "edk2: wrong --path-map" 0 $EFIPT symbols $APE --path-map "$OLD=$TMP/nowhere"
contains "edk2: wrong --path-map names the path" "$TMP/out" "$TMP/nowhere/X64/EfiptFixturePkg/App/FixtureApp/DEBUG/FixtureApp.dll: recorded build path not found (after --path-map)"
contains "edk2: wrong --path-map: no symbols" "$TMP/out" "symbols: none"

expect_rc "edk2: base name under the build directory" 0 $EFIPT symbols $APE --symbols "$FIX"
contains "edk2: moved tree said" "$TMP/out" "FixtureApp.dll: recorded build path not found (--path-map OLD=NEW rewrites it)"
contains "edk2: matched by base name" "$TMP/out" "matched by: base name"
contains "edk2: base name finds the .debug" "$TMP/out" "symbols: $APPD/FixtureApp.debug"

# DxeCore and the DXE driver: DWARF checked against their own code
for m in "$CORED/DxeCore" "$WDTD/WatchdogTimer"; do
	n=$(basename "$m")
	expect_rc "edk2: $n by base name" 0 $EFIPT symbols --pe "$m.efi:$BASE" --symbols "$FIX"
	contains "edk2: $n checked" "$TMP/out" "code: equal to the image"
done

# an image with no CodeView entry (its debug directory cleared): the file name
python3 - "$APPD/FixtureApp.efi" "$TMP/FixtureApp.efi" <<'EOP'
import struct, sys
d = bytearray(open(sys.argv[1], "rb").read())
opt = struct.unpack_from("<I", d, 0x3C)[0] + 24
struct.pack_into("<II", d, opt + 112 + 6 * 8, 0, 0)  # IMAGE_DIRECTORY_ENTRY_DEBUG
open(sys.argv[2], "wb").write(d)
EOP
expect_rc "edk2: image without CodeView" 0 $EFIPT symbols --pe "$TMP/FixtureApp.efi:$BASE" --symbols "$FIX"
if grep -q "recorded path" "$TMP/out"; then nok "edk2: no recorded path shown" "$(head -3 "$TMP/out")"; else ok "edk2: no recorded path shown"; fi
contains "edk2: found by the image's name" "$TMP/out" "matched by: base name"

# --- a run directory: the application loaded from an FV at BASE ---------------
mkrun() { # DIR NAME PATH PDB
	mkdir -p "$1"
	python3 tests/cli/pe_snapshot.py "$APPD/FixtureApp.efi" $BASE "$1/mem-0000000001000000.bin" >"$TMP/bytes"
	pages=$(( $(cat "$TMP/bytes") / 4096 ))
	$EFIPT synth --out "$1/trace.pt" --raw "$1/mem-0000000001000000.bin:$BASE" --start "$START" --insns 20000 --seed 2 2>/dev/null
	cat >"$1/memmap.json" <<EOM
{"regions": [{"type": "${RTYPE:-BootServicesCode}", "phys": "$BASE", "pages": $pages, "attr": "0xf", "snapshot": "mem-0000000001000000.bin"}]}
EOM
	cat >"$1/images.json" <<EOM
{"images": [{"name": "$2", "base": "$BASE", "size": $(stat -c %s "$1/mem-0000000001000000.bin"), "code_type": "BootServicesCode", "path": "$3", "pdb": "$4"}]}
EOM
	run_manifest "$1" trace.pt memmap.json images.json mem-0000000001000000.bin
}
entry=$(readelf -hW "$APPD/FixtureApp.debug" | awk '/Entry point/ { print $4 }')
START=$(printf '0x%x' $((BASE + entry)))
FVP="MemoryMapped(0xB,0x900000,0x9FFFFF)/FvFile($APP_GUID)"
# no CodeView path, a name that is only the GUID: Guid.xref names it
mkrun "$TMP/rg" "FvFile($APP_GUID)" "$FVP" ""
expect_rc "edk2: FvFile GUID through FV/Guid.xref" 0 $EFIPT symbols "$TMP/rg" --symbols "$FIX"
contains "edk2: matched by GUID" "$TMP/out" "matched by: FvFile GUID through Guid.xref"
contains "edk2: the xref line named" "$TMP/out" "FvFile $APP_GUID is FixtureApp in $FIX/FV/Guid.xref"
contains "edk2: GUID match checked against the snapshot" "$TMP/out" "code: equal to the image"
expect_rc "edk2: GUID match: top" 0 $EFIPT top "$TMP/rg" --symbols "$FIX"
contains "edk2: GUID match names the entry point" "$TMP/out" "FvFile($APP_GUID)\`_ModuleEntryPoint"
# the GUID in lower case, as some tools print it, and the FV folder given
lower=$(echo "$APP_GUID" | tr A-F a-f)
mkrun "$TMP/rl" "FvFile($lower)" "FvFile($lower)" ""
expect_rc "edk2: GUID in lower case, --symbols FV folder and X64" 0 $EFIPT symbols "$TMP/rl" --symbols "$FIX/FV" --symbols "$X64"
contains "edk2: lower-case GUID matched" "$TMP/out" "matched by: FvFile GUID through Guid.xref"
# without a Guid.xref: said, nothing guessed
mkdir -p "$TMP/nox"
cp -r "$X64" "$TMP/nox/"
expect_rc "edk2: GUID without Guid.xref" 0 $EFIPT symbols "$TMP/rg" --symbols "$TMP/nox"
contains "edk2: no xref: no symbols" "$TMP/out" "symbols: none"
contains "edk2: no xref said" "$TMP/out" "no Guid.xref under --symbols to name FvFile $APP_GUID"
# a GUID Guid.xref does not list
sed "s/$APP_GUID/$(echo $APP_GUID | sed 's/^3D/4D/')/g" "$TMP/rg/images.json" >"$TMP/other.json"
cp "$TMP/other.json" "$TMP/rg/images.json"
expect_rc "edk2: unknown GUID" 0 $EFIPT symbols "$TMP/rg" --symbols "$FIX"
contains "edk2: unknown GUID said" "$TMP/out" "is in no Guid.xref under --symbols"
contains "edk2: unknown GUID: no symbols" "$TMP/out" "symbols: none"

# a QEMU plugin's code record (QemuCode regions): only executed bytes are
# known, the rest is zero; here the read-only data EDK2 links into .text
zero_rodata() { # SNAPSHOT: zero [.rodata start, .text end) of the app
	python3 - "$1" "$APPD/FixtureApp.map" <<'EOP'
import re, sys
snap, mp = sys.argv[1], sys.argv[2]
t = open(mp).read().split("Linker script and memory map", 1)[1]
ro = int(re.search(r"\*\(\.rodata[^\n]*\n \.rodata\S*\s+(0x[0-9a-f]+)", t).group(1), 16)
text = re.search(r"\n\.text\s+(0x[0-9a-f]+)\s+(0x[0-9a-f]+)", t)
end = int(text.group(1), 16) + int(text.group(2), 16)
d = bytearray(open(snap, "rb").read())
d[ro:end] = bytes(end - ro)
open(snap, "wb").write(d)
print("%#x-%#x" % (ro, end))
EOP
}
RTYPE=QemuCode mkrun "$TMP/rq" "FixtureApp" "" "$OLD/X64/EfiptFixturePkg/App/FixtureApp/DEBUG/FixtureApp.dll"
zero_rodata "$TMP/rq/mem-0000000001000000.bin" >/dev/null
expect_rc "edk2: QEMU's code record (unexecuted bytes zero)" 0 $EFIPT symbols "$TMP/rq" --symbols "$FIX"
contains "edk2: QEMU record: matched" "$TMP/out" "symbols: $APPD/FixtureApp.debug"
contains "edk2: QEMU record: executed code compared" "$TMP/out" "code: equal to the image"
# the same images through --images: still QEMU's record
expect_rc "edk2: QEMU record, images from --images" 0 $EFIPT symbols "$TMP/rq" --images "$TMP/rq/images.json" --symbols "$FIX"
contains "edk2: QEMU record, --images: executed code compared" "$TMP/out" "code: equal to the image"
# a record where almost nothing executed: the match said to rest on few bytes
python3 - "$TMP/rq/mem-0000000001000000.bin" "$((entry))" <<'EOP'
import sys
d = bytearray(open(sys.argv[1], "rb").read())
e = int(sys.argv[2])
keep = d[e:e + 40]
d[:] = bytes(len(d))
d[e:e + 40] = keep
open(sys.argv[1], "wb").write(d)
EOP
expect_rc "edk2: QEMU record of a few bytes" 0 $EFIPT symbols "$TMP/rq" --symbols "$FIX"
contains "edk2: few bytes: matched" "$TMP/out" "code: equal to the image"
contains "edk2: few bytes: said" "$TMP/out" "the match rests on "
# an image of size 0 (images.json): it holds no code, so no symbols
mkrun "$TMP/r0" "FixtureApp" "" "$OLD/X64/EfiptFixturePkg/App/FixtureApp/DEBUG/FixtureApp.dll"
sed 's/"size": [0-9]*/"size": 0/' "$TMP/r0/images.json" >"$TMP/r0.json" && mv "$TMP/r0.json" "$TMP/r0/images.json"
run_manifest "$TMP/r0" trace.pt memmap.json images.json mem-0000000001000000.bin
expect_rc "edk2: an image of size 0" 0 $EFIPT symbols "$TMP/r0" --symbols "$FIX"
contains "edk2: size 0: no symbols" "$TMP/out" "symbols: none"
contains "edk2: size 0: said why" "$TMP/out" "the image's size is 0 (images.json): it holds no code"
if grep -q "code: equal" "$TMP/out"; then nok "edk2: size 0: no code check claimed" "$(cat "$TMP/out")"; else ok "edk2: size 0: no code check claimed"; fi
mkrun "$TMP/rz" "FixtureApp" "" "$OLD/X64/EfiptFixturePkg/App/FixtureApp/DEBUG/FixtureApp.dll"
zero_rodata "$TMP/rz/mem-0000000001000000.bin" >/dev/null
expect_rc "edk2: zeros in a firmware snapshot" 0 $EFIPT symbols "$TMP/rz" --symbols "$FIX"
contains "edk2: zeros in a firmware snapshot differ" "$TMP/out" "$APPD/FixtureApp.debug: code differs from the image at .text+0x"

# --- GNU ld .map: the last resort ----------------------------------------------
mkdir -p "$TMP/map/X64"
cp "$APPD/FixtureApp.map" "$APPD/FixtureApp.efi" "$TMP/map/X64/"
expect_rc "edk2: .map when no .debug" 0 $EFIPT symbols $APE --symbols "$TMP/map" --lookup $(printf '0x%x' $((BASE + entry + 4)))
contains "edk2: matched by map" "$TMP/out" "matched by: map file, not verified by code"
contains "edk2: map functions without lines" "$TMP/out" "(GNU ld map, no lines)"
contains "edk2: map sections checked against the image's code" "$TMP/out" "its code sections lie in the image's"
contains "edk2: map names the entry point" "$TMP/out" "FixtureApp.efi\`_ModuleEntryPoint+0x4"
# beside the recorded path, with --path-map; the snapshot's PE headers checked
mkrun "$TMP/rm" "FixtureApp" "" "$OLD/X64/EfiptFixturePkg/App/FixtureApp/DEBUG/FixtureApp.dll"
mkdir -p "$TMP/mapcv/X64/EfiptFixturePkg/App/FixtureApp/DEBUG"
cp "$APPD/FixtureApp.map" "$TMP/mapcv/X64/EfiptFixturePkg/App/FixtureApp/DEBUG/"
expect_rc "edk2: .map beside the recorded path" 0 $EFIPT symbols "$TMP/rm" --path-map "$OLD=$TMP/mapcv"
contains "edk2: recorded map used" "$TMP/out" "symbols: $TMP/mapcv/X64/EfiptFixturePkg/App/FixtureApp/DEBUG/FixtureApp.map"
contains "edk2: recorded map checked against the headers" "$TMP/out" "its code sections lie in the image's"
# another module's map: its .text is not the image's
cp "$WDTD/WatchdogTimer.map" "$TMP/map/X64/FixtureApp.map"
expect_rc "edk2: another module's map" 0 $EFIPT symbols $APE --symbols "$TMP/map"
contains "edk2: other map refused with the section" "$TMP/out" "$TMP/map/X64/FixtureApp.map: section .text [0x240,"
contains "edk2: other map not used" "$TMP/out" "symbols: none"
cp "$WDTD/WatchdogTimer.map" "$TMP/mapcv/X64/EfiptFixturePkg/App/FixtureApp/DEBUG/FixtureApp.map"
expect_rc "edk2: another module's map against the headers" 0 $EFIPT symbols "$TMP/rm" --path-map "$OLD=$TMP/mapcv"
contains "edk2: headers refuse the other map" "$TMP/out" "is not inside the image's code section at that RVA"
# not a map; a truncated map
echo "not a map" >"$TMP/map/X64/FixtureApp.map"
expect_rc "edk2: not a map" 0 $EFIPT symbols $APE --symbols "$TMP/map"
contains "edk2: not a map named" "$TMP/out" "$TMP/map/X64/FixtureApp.map: not a GNU ld map file"
head -c 40000 "$APPD/FixtureApp.map" >"$TMP/map/X64/FixtureApp.map"
expect_rc "edk2: truncated map" 0 $EFIPT symbols $APE --symbols "$TMP/map"
contains "edk2: truncated map named" "$TMP/out" "note: $TMP/map/X64/FixtureApp.map: "

# --- refused symbol files --------------------------------------------------------
mkdir -p "$TMP/bad"
cp "$APPD/FixtureApp.map" "$TMP/bad/"
cp "$WDTD/WatchdogTimer.debug" "$TMP/bad/FixtureApp.debug"
expect_rc "edk2: another module's .debug" 0 $EFIPT symbols $APE --symbols "$TMP/bad"
contains "edk2: mismatch names file and place" "$TMP/out" "$TMP/bad/FixtureApp.debug: code differs from the image at .text+0x"
contains "edk2: its map not used after a mismatch" "$TMP/out" "FixtureApp.map not tried: a symbol file of that name is another build"
contains "edk2: mismatch: no symbols" "$TMP/out" "symbols: none"
cp "$CORED/DxeCore.debug" "$TMP/bad/FixtureApp.debug"
expect_rc "edk2: a larger module's .debug" 0 $EFIPT symbols $APE --symbols "$TMP/bad"
contains "edk2: section outside the image named" "$TMP/out" "$TMP/bad/FixtureApp.debug: section .text [0x240,"
head -c 20000 "$APPD/FixtureApp.debug" >"$TMP/bad/FixtureApp.debug"
expect_rc "edk2: truncated .debug" 0 $EFIPT symbols $APE --symbols "$TMP/bad"
contains "edk2: truncated .debug named" "$TMP/out" "note: $TMP/bad/FixtureApp.debug: "
contains "edk2: truncated .debug: the map instead" "$TMP/out" "symbols: $TMP/bad/FixtureApp.map"
objcopy --only-keep-debug "$APPD/FixtureApp.debug" "$TMP/bad/FixtureApp.debug"
rm "$TMP/bad/FixtureApp.map"
expect_rc "edk2: .debug without code" 0 $EFIPT symbols $APE --symbols "$TMP/bad"
contains "edk2: .debug without code named" "$TMP/out" "$TMP/bad/FixtureApp.debug: holds no code to compare with the image"
objcopy --strip-all "$APPD/FixtureApp.debug" "$TMP/bad/FixtureApp.debug"
expect_rc "edk2: stripped .debug" 0 $EFIPT symbols $APE --symbols "$TMP/bad"
contains "edk2: stripped .debug named" "$TMP/out" "$TMP/bad/FixtureApp.debug: no functions"

# --- top, flame and calls against the reference ------------------------------------
# per module: traces synthesized over the image at BASE; the reference
# (stack_ref.py) names functions from the module's ELF symbols, efipt from
# its DWARF found under the build directory
check_module() { # NAME DEBUG-DIR MODULE SYNTH-OPTIONS...
	name=$1 dir=$2 mod=$3
	shift 3
	stack_check "$name" "--pe $dir/$mod.efi:$BASE" "$dir/$mod.debug" "$mod.efi" "$FIX" "$@"
}
check_module "edk2 app: plain" "$APPD" FixtureApp --seed 3
check_module "edk2 app: interrupts, overflows, disables" "$APPD" FixtureApp --seed 9 --interrupts 200 --ovf 200 --disable 2000
check_module "edk2 app: DisTNT gaps" "$APPD" FixtureApp --seed 8 --distnt --disretc
check_module "edk2 DxeCore: plain" "$CORED" DxeCore --seed 3
check_module "edk2 DxeCore: interrupts, overflows, disables" "$CORED" DxeCore --seed 11 --interrupts 200 --ovf 200 --disable 2000
check_module "edk2 WatchdogTimer: plain (one function after LTO)" "$WDTD" WatchdogTimer --seed 4

# the maps name the same functions as the DWARF (GCC's clone suffixes
# dropped): top from the maps alone equals top from the .debug files
mkdir -p "$TMP/maps"
cp "$APPD/FixtureApp.map" "$CORED/DxeCore.map" "$TMP/maps/"
for m in "$APPD/FixtureApp" "$CORED/DxeCore"; do
	n=$(basename "$m")
	$EFIPT synth --out "$TMP/m.pt" --pe "$m.efi:$BASE" --insns 60000 --seed 3 2>/dev/null
	$EFIPT top --pt "$TMP/m.pt" --pe "$m.efi:$BASE" --symbols "$FIX" --format csv >"$TMP/dw.csv"
	$EFIPT top --pt "$TMP/m.pt" --pe "$m.efi:$BASE" --symbols "$TMP/maps" --format csv >"$TMP/map.csv"
	if cmp -s "$TMP/dw.csv" "$TMP/map.csv" && [ "$(wc -l <"$TMP/map.csv")" -gt 3 ] &&
	   ! grep -q 'unknown' "$TMP/map.csv"; then
		ok "edk2 $n: top from the .map equals top from the DWARF"
	else
		nok "edk2 $n: top from the .map equals top from the DWARF" "$(diff "$TMP/dw.csv" "$TMP/map.csv" | head -4)"
	fi
done

# calls: under FixtureRun only what its source calls (Step is FixtureDouble)
$EFIPT synth --out "$TMP/c.pt" $APE --insns 60000 --seed 3 2>/dev/null
expect_rc "edk2 app: calls --function FixtureRun" 0 $EFIPT calls --pt "$TMP/c.pt" $APE --symbols "$FIX" --function FixtureRun
if awk '/`FixtureRun$/ { d = index($0, "F"); next }
	{ if (index($0, "F") <= d) exit 1; if ($2 !~ /`(FixtureDouble|FixtureChecksum)$/) exit 1; n++ }
	END { exit !(n > 0 && d > 0) }' "$TMP/out" && grep -q 'FixtureDouble$' "$TMP/out" &&
   grep -q 'FixtureChecksum$' "$TMP/out"; then
	ok "edk2 app: FixtureRun calls FixtureDouble and FixtureChecksum"
else
	nok "edk2 app: FixtureRun calls FixtureDouble and FixtureChecksum" "$(head -5 "$TMP/out")"
fi

# hostile maps: lines cut, numbers changed, long names, NULs, sections that
# overlap or run past 2^64; never a crash, a hang or a name outside the map
python3 - "$APPD/FixtureApp.map" "$TMP/hm" <<'EOP'
import os, random, sys
src, out = sys.argv[1], sys.argv[2]
os.makedirs(out)
lines = open(src, "rb").read().split(b"\n")
start = lines.index(b"Linker script and memory map")
rnd = random.Random(7)
for k in range(120):
    l = list(lines)
    for _ in range(rnd.randint(1, 12)):
        i = rnd.randrange(start, len(l))
        op = rnd.randrange(8)
        if op == 0:
            l[i] = l[i][:rnd.randrange(len(l[i]) + 1)]
        elif op == 1:
            l[i] = l[i].replace(b"0x", b"0xffffffffffffff", 1)
        elif op == 2:
            l[i] = b" .text." + b"A" * rnd.choice([255, 256, 300, 5000])
        elif op == 3:
            l[i] = l[i] + b"\0"
        elif op == 4:
            del l[i]
        elif op == 5:
            l.insert(i, b" .text.X 0x0000000000000240 0x100000 x.o")
        elif op == 6:
            l.insert(i, b"                0xfffffffffffffff0                Overflow")
        else:
            l.insert(i, b".text")
    open(os.path.join(out, "m%03d.map" % k), "wb").write(b"\n".join(l))
EOP
mkdir -p "$TMP/hmt"
bad=""
for f in "$TMP"/hm/*.map; do
	cp "$f" "$TMP/hmt/FixtureApp.map"
	$EFIPT symbols $APE --symbols "$TMP/hmt" --lookup $(printf '0x%x' $((BASE + 0x300))) >"$TMP/hout" 2>&1
	rc=$?
	if [ $rc -ne 0 ] || grep -q 'runtime error\|AddressSanitizer' "$TMP/hout"; then
		bad="$bad $(basename "$f"):$rc"
	fi
done
[ -z "$bad" ] && ok "edk2: 120 hostile maps: no crash" || nok "edk2: 120 hostile maps: no crash" "$bad"
