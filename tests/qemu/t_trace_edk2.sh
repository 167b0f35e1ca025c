# The EDK2 fixture's application (tests/data/edk2, built DEBUG with GCC5)
# traced for real under QEMU: efipt.efi runs it between the trace markers,
# efipt-qemu.so records the trace, efipt qemu --esp merges the guest's run
# directory. efipt symbols finds the app's DWARF in the fixture and checks
# it against the run's snapshot; efipt top names the app's functions, each
# with exactly the instructions insnlog.so saw executed at its addresses
# (functions from the ELF symbols, without efipt).
. tests/lib.sh
. tests/qemu/lib_qemu.sh
FIX=tests/data/edk2/Build/EfiptFixture/DEBUG_GCC5
APPD=$FIX/X64/EfiptFixturePkg/App/FixtureApp/DEBUG
plugin_output "edk2 under QEMU"
# EDK2_QEMU_DIR keeps the run for a look after the test
d=${EDK2_QEMU_DIR:-$TMP/app}
mkdir -p "$d"
sh ovmf/mkesp.sh --image "$d/esp.img" --add "$APPD/FixtureApp.efi:\\EFI\\tools\\FixtureApp.efi" \
	--args 'trace --source qemu --debugcon --shutdown -- \EFI\tools\FixtureApp.efi' >/dev/null
cp /usr/share/OVMF/OVMF_VARS_4M.fd "$d/vars.fd"
nice -n 10 timeout --kill-after=5 120 $EFIPT qemu -o "$d/run" --esp "$d/esp.img" --start marker --stop marker -- \
	-machine q35 -m 512 -smp 1 -accel tcg -cpu max -display none -nodefaults -no-reboot -net none \
	-drive if=pflash,format=raw,unit=0,readonly=on,file="$CODE" \
	-drive if=pflash,format=raw,unit=1,file="$d/vars.fd" \
	-drive format=raw,file="$d/esp.img" -device isa-debug-exit,iobase=0xf4,iosize=0x04 \
	-debugcon file:"$d/debugcon.log" -global isa-debugcon.iobase=0xe9 \
	-plugin "$LOGGER,out=$d/log.bin,from=marker,to=marker" >"$d/out" 2>"$d/err" </dev/null
rc=$?
[ "$rc" -eq 0 ] && ok "edk2 under QEMU: traced and merged" ||
	{ nok "edk2 under QEMU: traced and merged" "exit $rc: $(head -c 400 "$d/err"); $(tail -c 300 "$d/debugcon.log")"; exit 0; }
contains "edk2 under QEMU: the app ran and returned" "$d/debugcon.log" "FixtureApp.efi returned EFI_SUCCESS"

expect_rc "edk2 under QEMU: efipt symbols" 0 $EFIPT symbols "$d/run" --symbols "$FIX"
sed -n '/^FixtureApp /,/^[^ ]/p' "$TMP/out" >"$d/sym"
contains "edk2 under QEMU: the app's DWARF found in the fixture" "$d/sym" "symbols: $APPD/FixtureApp.debug"
contains "edk2 under QEMU: checked against the run's snapshot" "$d/sym" "code: equal to the image"

$EFIPT top "$d/run" --symbols "$FIX" --format csv >"$d/top.csv" 2>"$d/top.err"
base=$(python3 -c "
import json
for i in json.load(open('$d/run/images.json'))['images']:
    if i['name'] == 'FixtureApp':
        print(i['base'], i['size'])")
# the reference: the logged addresses in the app, per ELF function symbol
if python3 - "$d/log.bin" $base "$APPD/FixtureApp.debug" "$d/top.csv" >"$d/cmp" 2>&1 <<'EOP'
import csv, struct, subprocess, sys
# the logger records from the start marker on, as the trace does
log, base, size, elf, top = sys.argv[1], int(sys.argv[2], 16), int(sys.argv[3]), sys.argv[4], sys.argv[5]
raw = open(log, "rb").read()
seq = struct.unpack("<%dQ" % (len(raw) // 8), raw[:len(raw) // 8 * 8])
funcs = []
for line in subprocess.run(["readelf", "-sW", elf], capture_output=True, text=True, check=True).stdout.splitlines():
    f = line.split()
    if len(f) >= 8 and f[3] == "FUNC" and f[6] != "UND" and int(f[2], 0):
        funcs.append((int(f[1], 16), int(f[1], 16) + int(f[2], 0), f[7].split(".")[0]))
want = {}
prev = None
for a in seq:
    if a == prev:  # a REP instruction's iterations are one instruction
        continue
    prev = a
    if base <= a < base + size:
        name = next((n for lo, hi, n in funcs if lo <= a - base < hi), "[unknown]")
        want[name] = want.get(name, 0) + 1
got = {r["function"]: int(r["excl"]) for r in csv.DictReader(open(top)) if r["image"] == "FixtureApp"}
if not want or want != got:
    print("executed %s, efipt top %s" % (sorted(want.items()), sorted(got.items())))
    sys.exit(1)
print(", ".join("%s %d" % kv for kv in sorted(want.items())))
EOP
then
	ok "edk2 under QEMU: top's instructions per app function = executed ($(cat "$d/cmp"))"
else
	nok "edk2 under QEMU: top's instructions per app function = executed" "$(head -c 600 "$d/cmp")"
fi
for f in FixtureRun FixtureFib FixtureChecksum FixtureDouble _ModuleEntryPoint; do
	grep -q "^\"FixtureApp\",\"$f\"," "$d/top.csv" && ok "edk2 under QEMU: top names $f" ||
		nok "edk2 under QEMU: top names $f" "$(head -c 300 "$d/top.csv")"
done
