# Images loaded while efipt.efi traces on its hardware path (efi/load_watch.c)
# under QEMU's TCG with efipt-qemu.so start=guest: tests/qemu/load_app.c
# loads and runs child.efi 40 times (the firmware unloads it when it
# returns), then child2.efi, the same size with its code a few bytes on,
# into the memory child.efi had. efipt.efi's
# watch of LoadImage must leave the firmware working (all run, the trace
# ends, the BS table is put back), and keeps all 41 loads (more than the 32
# it holds without allocating) in its images.json and manifest. Their
# positions are null here, with the reason: QEMU reads the PT MSRs back as 0,
# so the output position cannot be read (real CPUs: tests/unit/
# test_pt_engine.c, the PT model). The plugin's own codechanges.bin places
# child2.efi's code at the instruction where it first ran, so the merged run
# decodes with zero errors. Needs plugin API 4 (QEMU 9.2 on) for start=guest.
. tests/lib.sh
. tests/qemu/lib_qemu.sh

plugin_output "loads"
PROFILE=$PWD/tests/data/cpu-profiles/tiger-lake-up3-core-i7-1165g7.txt
need_api4 loads "start=guest; qemu10/t_qemu_loads runs it"

d=$TMP/loads
mkdir -p "$d"
cp "$PROFILE" "$d/prof.txt"
sh ovmf/mkesp.sh --image "$d/esp.img" --add 'build/tests/load_app.efi:\EFI\tools\app.efi' \
	--add 'build/tests/load_app.efi:\EFI\tools\child.efi' \
	--add 'build/tests/load_app2.efi:\EFI\tools\child2.efi' --add "$d/prof.txt:\\prof.txt" \
	--args 'trace --emulated-caps \prof.txt --debugcon --shutdown -- \EFI\tools\app.efi' >/dev/null
EFIPT_QEMU_PLUGIN=$PLUGIN nice -n 10 sh ovmf/qemu_esp.sh "$EFIPT" "$d/esp.img" "$d" 600 \
	--esp "$d/esp.img" --start guest --cpuid "$PROFILE" >"$d/out" 2>"$d/qemu.log"
rc=$?
[ "$rc" -eq 0 ] && ok "loads: efipt qemu --start guest ran efipt.efi to power-off" ||
	nok "loads: efipt qemu --start guest" "exit $rc: $(head -c 400 "$d/qemu.log"); $(tail -c 300 "$d/debugcon.log")"
contains "loads: the app loaded and ran the 41 children under the watch" "$d/debugcon.log" \
	"efipt: \\EFI\\tools\\app.efi returned EFI_SUCCESS"

# efipt.efi's own run directory, on the ESP
id=$(python3 -c "import json; print(json.load(open('$d/run/manifest.json'))['guest_run']['run_id'])" 2>/dev/null)
img=$d/esp.img
[ "$(dd if="$img" bs=1 skip=512 count=8 2>/dev/null)" = "EFI PART" ] && img="$img@@1M"
mcopy -n -i "$img" "::/efipt/$id/manifest.json" "$d/guest.json" 2>"$d/mcopy.log"
expect "loads: efipt.efi's manifest lists the 41 loads in order (or says how many it had no room for), unplaced with the reason" \
	python3 -c "
import json; m=json.load(open('$d/guest.json')); l=m.get('loaded_while_traced', [])
names=['child']*40+['child2']
assert len(l)+m.get('loaded_while_traced_unlisted', 0)==41 and 'loaded_while_traced_dropped' not in m, m
assert [x['image']['name'] for x in l]==names[:len(l)], l
for x in l: assert x['position'] is None and 'could not be read' in x['why'], x"
# images.json: the loads as full records after the images loaded before
# the trace, named from their device paths, with their code sections (their
# headers are in no snapshot) and "loaded_at" null with the same reason
mcopy -n -i "$img" "::/efipt/$id/images.json" "$d/guest_images.json" 2>>"$d/mcopy.log"
expect "loads: efipt.efi's images.json (written again, one entry in the manifest) lists the 41 loads last, unplaced, with code sections, child2 over a child" \
	python3 -c "
import json; l=json.load(open('$d/guest_images.json'))['images']
assert [x['name'] for x in l[-41:]]==['child']*40+['child2'], [x['name'] for x in l]
for x in l[-41:]:
	assert x['loaded_at'] is None and 'could not be read' in x['loaded_why'], x
	assert x['code'] and 'child' in x['path'], x
assert all('loaded_at' not in x for x in l[:-41]), l
a, b = [(int(x['base'], 16), x['size']) for x in (l[-2], l[-1])]
assert a[0] < b[0] + b[1] and b[0] < a[0] + a[1], (a, b)
f=[x for x in json.load(open('$d/guest.json'))['files'] if x['name']=='images.json']
import os; assert len(f)==1 and f[0]['size']==os.path.getsize('$d/guest_images.json'), f"
expect "loads: the plugin saw child2's code where child's had run (codechanges.bin)" python3 -c "
import json; t=json.load(open('$d/run/manifest.json'))['trace']
assert t['code_changes'] > 0, t['code_changes']"
expect_rc "loads: efipt decode of the merged run" 0 $EFIPT decode "$d/run"
expect "loads: zero errors, child2's code decoded" python3 -c "
import re; s=open('$TMP/out').read()
assert re.search(r'^Errors +0$', s, re.M), s"
# a symbol lookup by name into an image loaded while traced, and what QEMU
# cannot give: without a position (null here) the run's code at child2's
# place is the code first seen there (child's, which ran there first), so
# child2's own symbol file is checked against it and refused, never used to
# name child's code; with a position its code comes from codechanges.bin
# (tests/cli/t_decode_loads.sh checks that, on a model run directory)
expect "loads: the merged run's images.json keeps the 41 loads, unplaced" python3 -c "
import json; l=json.load(open('$d/run/images.json'))['images']
x=[i for i in l if i['name'] in ('child', 'child2')]
assert sorted(i['name'] for i in x)==['child']*40+['child2'] and all(i['loaded_at'] is None for i in x), x"
expect_rc "loads: efipt symbols finds child2's file by its name" 0 $EFIPT symbols "$d/run" \
	--symbols child2=build/tests/load_app2.so
cp "$TMP/out" "$d/symbols.out"
expect "loads: ... checks it against the code the run holds there and refuses it" \
	python3 - "$d/symbols.out" <<'EOP'
import re, sys
t = open(sys.argv[1]).read()
b = [b for b in re.split(r"\n(?=\S)", t) if b.startswith("child2 ")]
assert len(b) == 1 and "symbols: none" in b[0] and "load_app2.so: code differs" in b[0], b
EOP
