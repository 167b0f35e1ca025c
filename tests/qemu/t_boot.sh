# efipt.efi under QEMU+OVMF (TCG, no Intel PT): caps, run directory, --help,
# bad options. Every boot runs under a timeout; a hang fails the test.
. tests/lib.sh
. tests/qemu/lib_qemu.sh

boot caps "caps --debugcon --shutdown"
L=$TMP/caps/debugcon.log
contains "caps: reports PT unsupported with the reason" "$L" "Intel PT not supported: the CPU vendor is \"AuthenticAMD\" (CPUID.(EAX=00H):EBX,EDX,ECX), not \"GenuineIntel\" (hypervisor TCGTCGTCGTCG)"
contains "caps: exits EFI_UNSUPPORTED" "$L" "efipt: exit EFI_UNSUPPORTED"
contains "caps: arguments read from efipt.args" "$L" "(arguments from efipt.args)"
contains "caps: announces run directory" "$L" "efipt: run directory \\efipt\\"
run=$(rundirs caps | head -n 1)
if [ -n "$run" ]; then ok "caps: run directory on the ESP"; else nok "caps: run directory on the ESP" "none copied out"; fi
expect_rc "caps: efipt info accepts the run directory" 0 $EFIPT info "$run"
contains "caps: info shows unsupported" "$TMP/out" "Result       unsupported (EFI_UNSUPPORTED)"
expect "caps: manifest says unsupported" python3 -c "
import json; m=json.load(open('$run/manifest.json'))
assert m['status']['result']=='unsupported' and m['cpu']['pt'] is False
assert m['command_line']=='caps --debugcon --shutdown', m['command_line']
assert [f['name'] for f in m['files']]==['cpuid.txt']"
expect_rc "caps: cpuid.txt is a valid cpuid -r dump" 3 $EFIPT caps --cpuid "$run/cpuid.txt"
expect "caps: no temporary files left" sh -c "! ls '$run' | grep -q tmp"

boot intel "caps --debugcon --shutdown" Skylake-Client
contains "intel model: vendor GenuineIntel named" "$TMP/intel/debugcon.log" "EBX[25]=0 (GenuineIntel, TCGTCGTCGTCG)"
contains "intel model: family/model reported" "$TMP/intel/debugcon.log" "GenuineIntel family 0x6 model 0x5e"

boot help "--help --debugcon --shutdown"
contains "help: usage printed" "$TMP/help/debugcon.log" "usage: efipt.efi [GLOBAL OPTIONS]"
contains "help: exits EFI_SUCCESS" "$TMP/help/debugcon.log" "efipt: exit EFI_SUCCESS"
[ -z "$(rundirs help)" ] && ok "help: nothing written" || nok "help: nothing written" "a run directory appeared"

boot badopt "caps --bogus --debugcon --shutdown"
contains "bad option: named" "$TMP/badopt/debugcon.log" "efipt: caps takes no arguments, got '--bogus'"
contains "bad option: EFI_INVALID_PARAMETER" "$TMP/badopt/debugcon.log" "efipt: exit EFI_INVALID_PARAMETER"

boot badcmd "--frob --debugcon --shutdown"
contains "unknown option: named" "$TMP/badcmd/debugcon.log" "efipt: unknown option '--frob'"
contains "unknown option: EFI_INVALID_PARAMETER" "$TMP/badcmd/debugcon.log" "efipt: exit EFI_INVALID_PARAMETER"
[ -z "$(rundirs badcmd)" ] && ok "unknown option: nothing written" || nok "unknown option: nothing written" "a run directory appeared"
[ -z "$(rundirs badopt)" ] && ok "bad option: nothing written" || nok "bad option: nothing written" "a run directory appeared"

# From the firmware's UEFI Shell: arguments arrive as load options
printf 'fs0:\r\n\\efipt.efi caps --debugcon --shutdown\r\n' >"$TMP/startup.nsh"
mkdir -p "$TMP/shell"
sh ovmf/mkesp.sh --image "$TMP/shell/esp.img" --no-fallback --add "$TMP/startup.nsh:startup.nsh" >/dev/null
sh ovmf/boot.sh "$TMP/shell/esp.img" "$TMP/shell" "$BOOT_TIMEOUT"
rc=$?
[ "$rc" -eq 0 ] && ok "shell: boots, runs and powers off" || nok "shell: boots, runs and powers off" "QEMU exit $rc"
contains "shell: arguments from load options" "$TMP/shell/debugcon.log" "efipt.efi $(cat VERSION): caps (arguments from load options)"
contains "shell: exits EFI_UNSUPPORTED" "$TMP/shell/debugcon.log" "efipt: exit EFI_UNSUPPORTED"

# A second run on the same ESP gets its own, later run directory
sh ovmf/boot.sh "$TMP/caps/esp.img" "$TMP/caps2" "$BOOT_TIMEOUT" || true
n=$(ls -d "$TMP/caps2"/efipt/*/ 2>/dev/null | wc -l)
first=$(ls "$TMP/caps2/efipt" | head -n 1)
last=$(ls "$TMP/caps2/efipt" | tail -n 1)
[ "$n" -eq 2 ] && [ "$first" != "$last" ] && [ "$first" = "$(basename "$(rundirs caps | head -n 1)")" ] &&
	ok "second run: new run directory, sorted after the first" ||
	nok "second run: new run directory" "found $n: $first .. $last"

# The USB stick layout (make usb): a GPT disk with an EFI System Partition
mkdir -p "$TMP/gpt"
sh ovmf/mkesp.sh --disk "$TMP/gpt/disk.img" --args "caps --debugcon --shutdown" >/dev/null
sh ovmf/boot.sh "$TMP/gpt/disk.img" "$TMP/gpt" "$BOOT_TIMEOUT"
rc=$?
[ "$rc" -eq 0 ] && ok "gpt disk: boots, runs and powers off" || nok "gpt disk: boots, runs and powers off" "QEMU exit $rc"
contains "gpt disk: efipt.efi ran from the ESP partition" "$TMP/gpt/debugcon.log" "efipt: exit EFI_UNSUPPORTED"
n=$(ls -d "$TMP/gpt"/efipt/*/ 2>/dev/null | wc -l)
[ "$n" -eq 1 ] && ok "gpt disk: run directory written to the partition" || nok "gpt disk: run directory written to the partition" "found $n"
