# The README's "each from one command" lines, run as written on a run
# directory of an EDK2 driver (tests/data/edk2's DxeCore, traced by the
# synthesizer): RUNDIR and BUILD are the only words replaced (and a
# --source-map to stand-in sources, as the fixture has no EDK2 tree). Their
# outputs pass the checkers: lcov_ref.py, drcov_check.py, timeline_check.py.
. tests/lib.sh
X64=tests/data/edk2/Build/EfiptFixture/DEBUG_GCC5/X64
DXE=$X64/MdeModulePkg/Core/Dxe/DxeMain/DEBUG/DxeCore
base=0x7f000000
if [ ! -f "$DXE.efi" ]; then
	nok "readme: fixture" "tests/data/edk2 missing (make edk2-fixture)"
	exit 0
fi
top=$(pwd)
efipt=$(cd "$(dirname "$EFIPT")" && pwd)/$(basename "$EFIPT")

# the run directory: DxeCore's file is its image in memory (GenFw lays the
# sections out at their RVAs)
D=$TMP/run
mkdir -p "$D" "$TMP/w"
snap=mem-$(printf '%016x' $base).bin
cp "$DXE.efi" "$D/$snap"
size=$(stat -c %s "$DXE.efi")
$EFIPT synth --out "$D/trace.pt" --truth "$TMP/truth" --pe "$DXE.efi:$base" --insns 60000 --seed 3 2>/dev/null ||
	nok "readme: test trace" "efipt synth failed"
pages=$(((size + 4095) / 4096))
truncate -s $((pages * 4096)) "$D/$snap"
cat >"$D/memmap.json" <<EOM
{"regions": [{"type": "BootServicesCode", "phys": "$base", "pages": $pages, "attr": "0xf", "snapshot": "$snap"}]}
EOM
cat >"$D/images.json" <<EOM
{"images": [{"name": "DxeCore", "base": "$base", "size": $size, "code_type": "BootServicesCode", "path": "", "pdb": ""}]}
EOM
run_manifest "$D" trace.pt memmap.json images.json $snap

# stand-in sources for genhtml: every SF, as many lines as it needs
$EFIPT coverage "$D" --symbols "$top/tests/data/edk2/Build" --format lcov -o "$TMP/pre.info" 2>/dev/null
awk -F'[:,]' -v src="$TMP/src" '
	/^SF:/ { f = src $2 }
	/^(DA|FN|BRDA):/ { if ($2 > n[f]) n[f] = $2 }
	END { for (f in n) { d = f; sub(/\/[^\/]*$/, "", d); system("mkdir -p \"" d "\""); for (i = 1; i <= n[f]; i++) print "/* " i " */" > f; close(f) } }' "$TMP/pre.info"

cmds=$(awk '/^## Coverage and timelines, each from one command/ { on = 1; next } /^## / { on = 0 }
	on && /^    build\/efipt .*RUNDIR/ { sub(/^    /, ""); print }' README.md)
n=$(printf '%s\n' "$cmds" | grep -c .)
[ "$n" -eq 3 ] && ok "readme: three one-command lines found" || nok "readme: three one-command lines found" "$n: $cmds"
printf '%s\n' "$cmds" | while IFS= read -r c; do
	run=$(printf '%s' "$c" | sed "s|build/efipt|$efipt|g; s|RUNDIR|$D|g; s|BUILD|$top/tests/data/edk2/Build|g; s|--format lcov|--format lcov --source-map /=$TMP/src/|")
	if (cd "$TMP/w" && sh -c "$run") >"$TMP/out" 2>"$TMP/err"; then
		ok "readme: runs as written: $c"
	else
		nok "readme: runs as written: $c" "exit $?: $(head -c 300 "$TMP/err")"
	fi
done

W=$TMP/w
[ -f "$W/html/index.html" ] && ok "readme: genhtml wrote html/index.html" || nok "readme: genhtml wrote html/index.html" "missing"
r=$(python3 tests/cli/lcov_ref.py "$W/run.info" "$DXE.debug" $base "$TMP/truth")
case "$r" in ok*) ok "readme: run.info equals the reference ($r)" ;; *) nok "readme: run.info equals the reference" "$r" ;; esac
r=$(python3 tests/cli/drcov_check.py "$W/run.drcov" --truth "$TMP/truth")
case "$r" in *drcov_check:*) nok "readme: run.drcov covers every executed instruction" "$r" ;; *) ok "readme: run.drcov covers every executed instruction" ;; esac
grep -a -q ", DxeCore.efi\$" "$W/run.drcov" && ok "readme: run.drcov names DxeCore.efi" || nok "readme: run.drcov names DxeCore.efi" "$(head -c 300 "$W/run.drcov")"
r=$(python3 tests/cli/timeline_check.py "$W/run.json")
[ "$r" = ok ] && ok "readme: run.json passes the timeline checker" || nok "readme: run.json passes the timeline checker" "$r"
