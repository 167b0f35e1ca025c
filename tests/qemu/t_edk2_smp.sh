# EfiptPkg on the application processors (docs/edk2.md "Several CPUs"):
# OVMF with the package (make ovmf-efipt, a test build with
# PcdEfiptEmulatedCaps) under efipt-qemu.so start=guest with -smp 2. Two
# boots arm it from the ESP (efipt.efi arm --emulated-caps PROFILE, then
# arm --next-boot --cpus all --size 64K); on the third EfiptPei programs PT
# on the boot processor at memory discovery and EfiptDxe on the AP once MP
# services is there, both from the profile's capabilities (QEMU TCG alone),
# and stops both at ReadyToBoot. The plugin follows each vCPU's own
# WRMSRs: each vCPU's stream must decode with zero errors to exactly what
# the logger (tests/qemu/insnlog.c cpus=all, from=traceen) recorded for
# that vCPU while its TraceEn was set (the boot processor's 64K stop-mode
# buffer fills in PEI: its trace is the first of those instructions, and
# the AP's holds all of its own); efipt.efi collect reports each CPU
# from the table. Then a list naming a CPU that does not exist: said, the
# boot goes on. Needs plugin API 4 (QEMU 9.2 on): under an older QEMU, a
# SKIP.
. tests/lib.sh
. tests/qemu/lib_qemu.sh

edk2_ovmf "EfiptPkg smp"
plugin_output "EfiptPkg smp"
need_api4 "EfiptPkg smp" start=guest
PROFILE=$PWD/tests/data/cpu-profiles/tiger-lake-up3-core-i7-1165g7.txt
QEMU_EXTRA="-smp 2"
export QEMU_EXTRA

# arm: the profile, then the options (each a boot of its own)
profile_esp "$TMP/caps" 'arm --emulated-caps \prof.txt --debugcon --shutdown'
fwboot_esp caps
contains "arm --emulated-caps: the profile is written" "$TMP/caps/debugcon.log" \
	"efipt: armed: a test build of the firmware emulates the Intel PT of \\prof.txt"
fwboot opts 'arm --next-boot --cpus all --size 64K --debugcon --shutdown' "$TMP/caps/vars.fd"
contains "arm --next-boot --cpus all: armed" "$TMP/opts/debugcon.log" \
	"armed: the next boot traces with: --cpus all --size 64K"

# the traced boot, under the plugin and the logger
d=$TMP/smp
mkdir -p "$d"
sh ovmf/mkesp.sh --image "$d/esp.img" --args 'collect --debugcon --shutdown' >/dev/null
OVMF_CODE=$EOVMF OVMF_VARS=$TMP/opts/vars.fd \
	QEMU_EXTRA="-smp 2 -plugin $LOGGER,out=$d/log.bin,from=traceen,cpus=all,head=3000000 \
-device isa-debugcon,iobase=0x402,chardev=fw -chardev file,id=fw,path=$d/fw.log" \
	guest_esp "smp: the firmware traced under efipt qemu --start guest -smp 2 to power-off" "$d" 900
contains "smp: EfiptPei programs the boot processor with the profile's PT" "$d/fw.log" \
	"EfiptPei: running: EMULATED Intel PT"
contains "smp: EfiptDxe starts the AP through MP services" "$d/fw.log" \
	"EfiptDxe: --cpus: 2 CPUs, 1 application processors tracing"
contains "smp: EfiptDxe's record of the AP" "$d/fw.log" "EfiptDxe: CPU 1 (APIC ID 0x1): running"
contains "smp: the table holds the AP's record" "$d/fw.log" "images, 1 other CPUs: Success"
contains "smp: collect reads the AP's record" "$d/debugcon.log" "efipt: CPU 1: EMULATED Intel PT"
wrmsrs_per_cpu "smp: each vCPU's WRMSRs accepted, TraceEn set once then cleared, a ToPA each" "$d" 2
expect "smp: the run lists 2 traces" python3 -c "
import json; m=json.load(open('$d/run/manifest.json')); t=m['trace']
assert t['cpus']==2 and [(e['cpu'], e['file']) for e in t['traces']]==[(0,'trace.pt'),(1,'trace.cpu1.pt')], t['traces']
assert all(e['bytes'] > 0 for e in t['traces']), t['traces']"
expect_rc "smp: CPU 0 decodes with zero errors" 0 $EFIPT insn --run "$d/run" --cpu 0 --no-inst
mv "$TMP/out" "$d/insn.txt"
part_equals_log "smp: CPU 0" "$d" prefix \
	"decoded = the first instructions executed from EfiptPei's TraceEn write (the buffer filled)"
expect_rc "smp: CPU 1 decodes with zero errors" 0 $EFIPT insn --run "$d/run" --cpu 1 --no-inst
mv "$TMP/out" "$d/insn1.txt"
cpu_equals_log smp "$d" 1 "while EfiptDxe's TraceEn was set"
expect_rc "smp: efipt decode --cpu 1 reads the AP's trace" 0 $EFIPT decode --cpu 1 "$d/run"
contains "smp: zero decode errors on the AP" "$TMP/out" "Errors        0"
# the comparison finds one instruction changed in the AP's trace
sed '100s/.*/0000000000000000/' "$d/insn1.txt" >"$d/insn1.drop"
expect "smp: the comparison finds an instruction of CPU 1's that differs" sh -c "! python3 \
	tests/qemu/insnlog_cmp.py '$d/log.bin.cpu1' '$d/insn1.drop' '$d/run/manifest.json' 0 --cpu 1"

# a list naming CPUs that do not exist: said, the boot goes on (plain TCG)
fwboot bad1 'arm --next-boot --cpus 1,7 --size 64K --debugcon --shutdown' "$TMP/caps/vars.fd"
fwboot bad2 'collect --debugcon --shutdown' "$TMP/bad1/vars.fd"
contains "bad list: CPU 7 named as absent, the boot goes on" "$TMP/bad2/fw.log" \
	"--cpus: there is no CPU 7 (MP services counts 2: 0-1): not traced"
contains "bad list: CPU 1 traced" "$TMP/bad2/fw.log" "EfiptDxe: CPU 1 (APIC ID 0x1): running"
contains "bad list: collect reports the table" "$TMP/bad2/debugcon.log" "efipt: firmware boot trace: stopped"
# collect's run: the multi-CPU format (docs/format.md "Several CPUs"), empty
# files here (QEMU 10.0 reads the output MSRs as 0; the traces were efipt
# qemu's above), the AP's record in boot_trace
r=$(rundirs bad2 | head -n 1)
expect "bad list: collect's run lists both CPUs' traces with their APIC IDs and the AP's record" python3 -c "
import json; m=json.load(open('${r}manifest.json')); t=m['trace']; b=m['boot_trace']
assert t['cpus']==2 and [(e['cpu'], e['file'], e['apic_id']) for e in t['traces']]==[(0,'trace.pt','0x0'),(1,'trace.cpu1.pt','0x1')], t
assert b['emulated'] and b['cpus']==[{'cpu': 1, 'apic_id': '0x1', 'status': 'stopped', 'reason': ''}], b
assert 'there is no CPU 7' in b['reason'], b"
$EFIPT info "$r" >"$TMP/info.txt" 2>&1
contains "bad list: efipt info reads collect's run, both trace files" "$TMP/info.txt" "trace.cpu1.pt"
