# efipt.efi trace --cpus on firmware without EFI_MP_SERVICES_PROTOCOL: OVMF
# under TCG with the protocol uninstalled first by tests/qemu/nomp_app.c
# (booted as BOOTX64.EFI; it then starts \EFI\BOOT\efipt.efi). efipt.efi
# must refuse --cpus with the message that names the protocol and its GUID
# (exit EFI_NOT_FOUND),
# write nothing into any CPU's PT MSRs (it never got as far as a CPU), and
# leave a run whose result says unsupported; the same image with --cpus 0
# left out traces the BSP alone as usual. --emulated-caps takes PT's
# capabilities from a profile (TCG's CPUID has none); no plugin is needed,
# as nothing is traced in the refused run. Two short boots.
. tests/lib.sh
. tests/qemu/lib_qemu.sh

A=${EFIPT_BUILD:-build}/tests
[ -f "$A/nomp_app.efi" ] && [ -f "$A/traced_app.efi" ] || A=build/tests
[ -f "$A/nomp_app.efi" ] || { nok "nomp_app.efi" "not built (make build/tests/nomp_app.efi)"; exit 0; }
PROFILE=tests/data/cpu-profiles/tiger-lake-up3-core-i7-1165g7.txt

# nomp NAME ARGS: efipt.efi started by nomp_app.efi with efipt.args ARGS
nomp() {
	mkdir -p "$TMP/$1"
	EFIPT_EFI=$A/nomp_app.efi sh ovmf/mkesp.sh --image "$TMP/$1/esp.img" \
		--add "$EFIPT_EFI_IMAGE:\\EFI\\BOOT\\efipt.efi" --add "$PROFILE:\\prof.txt" --add "$A/traced_app.efi:\\app.efi" \
		--args "$2" >/dev/null
	boot_esp "$1"
}
EFIPT_EFI_IMAGE=${EFIPT_EFI:-build/efipt.efi}

nomp cpus 'trace --emulated-caps \prof.txt --cpus all --debugcon -- \app.efi'
L=$TMP/cpus/debugcon.log
contains "cpus: MP services were removed before efipt.efi ran" "$L" "nomp: MP services removed"
contains "cpus: --cpus is refused, naming the protocol, its GUID and the reason" "$L" \
	"efipt: this firmware has no EFI_MP_SERVICES_PROTOCOL (3fdda605-a76e-4f46-ad29-12f4531b3d08): EFI_NOT_FOUND; without it efipt cannot run code on the application processors"
contains "cpus: efipt.efi says it exits EFI_NOT_FOUND" "$L" "efipt: exit EFI_NOT_FOUND"
contains "cpus: ... and returns it to the image that started it" "$L" "nomp: efipt.efi returned 0x800000000000000e"
expect "cpus: the run says unsupported, with the same message, and holds no trace" python3 -c "
import glob, json, os
runs=glob.glob('$TMP/cpus/efipt/*/manifest.json'); assert len(runs)==1, runs
m=json.load(open(runs[0])); s=m['status']
assert s['result']=='unsupported' and 'no EFI_MP_SERVICES_PROTOCOL' in s['message'], s
assert not glob.glob(os.path.dirname(runs[0]) + '/trace*.pt'), os.listdir(os.path.dirname(runs[0]))"

# without --cpus, MP services are not needed: the BSP is traced (the
# emulated unit is not there without the plugin: 0 bytes, said so)
nomp bsp 'trace --emulated-caps \prof.txt --debugcon -- \app.efi'
L=$TMP/bsp/debugcon.log
expect "bsp: without --cpus efipt.efi does not ask for MP services" sh -c \
	"grep -q 'nomp: MP services removed' '$L' && ! grep -q 'EFI_MP_SERVICES_PROTOCOL' '$L'"
contains "bsp: ... and gets as far as starting the traced image" "$L" "efipt: EMULATED Intel PT"
