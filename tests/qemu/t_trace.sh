# efipt.efi trace under QEMU+OVMF (no Intel PT): the synthetic source traces
# a real image (a second copy of efipt.efi printing its version), decodes it
# in place, and `efipt decode` on the host must print the identical summary
# with the exact instruction count of the synthesized walk.
. tests/lib.sh
. tests/qemu/lib_qemu.sh

boot synth 'trace --source synthetic --decode --insns 200000 --debugcon --shutdown -- \efipt.efi --version'
L=$TMP/synth/debugcon.log
contains "synthetic: labelled as synthetic" "$L" "efipt: SYNTHETIC trace (no Intel PT): "
contains "synthetic: traced image ran and returned" "$L" "efipt: \\efipt.efi returned EFI_SUCCESS"
contains "synthetic: in-place summary printed" "$L" "efipt: in-place decode:"
contains "synthetic: exits EFI_SUCCESS" "$L" "efipt: exit EFI_SUCCESS"
run=$(rundirs synth | head -n 1)
expect_rc "synthetic: efipt info accepts the run" 0 $EFIPT info "$run"
walked=$(sed -n 's/.*SYNTHETIC trace (no Intel PT): \([0-9]*\) instructions.*/\1/p' "$L")
decoded=$(sed -n 's/^Instructions  \([0-9]*\)$/\1/p' "$run/summary.txt")
[ -n "$walked" ] && [ "$walked" = "$decoded" ] && ok "synthetic: in-place decode reproduces every walked instruction ($walked)" ||
	nok "synthetic: in-place instruction count" "walked '$walked', decoded '$decoded'"
contains "synthetic: no decode errors in firmware" "$run/summary.txt" "Errors        0"
expect_rc "synthetic: host decode succeeds" 0 $EFIPT decode "$run"
if cmp -s "$TMP/out" "$run/summary.txt"; then ok "synthetic: host summary identical to firmware summary"; else nok "synthetic: host summary identical" "$(diff "$TMP/out" "$run/summary.txt" | head -n 10)"; fi
expect_rc "synthetic: efipt insn --run lists the run" 0 $EFIPT insn --run "$run" --stat
contains "synthetic: efipt insn --run counts every walked instruction" "$TMP/out" "insn: $walked"
expect "synthetic: manifest marks the trace synthetic" python3 -c "
import json; m=json.load(open('$run/manifest.json'))
assert m['trace']['source']=='synthetic' and m['trace']['bytes']>0
assert m['traced_image']['path']=='\\\\efipt.efi' and m['traced_exit_status']=='EFI_SUCCESS'
assert m['status']['result']=='ok' and 'SYNTHETIC' in m['status']['message']"

# the synthetic trace has the packets the trace options ask for (here no
# RET compression, a TSC in each PSB+): the decoders read it by them
boot synthopt 'trace --source synthetic --noretcomp --tsc --decode --insns 100000 --debugcon --shutdown -- \efipt.efi --version'
L=$TMP/synthopt/debugcon.log
run=$(rundirs synthopt | head -n 1)
walked=$(sed -n 's/.*SYNTHETIC trace (no Intel PT): \([0-9]*\) instructions.*/\1/p' "$L")
decoded=$(sed -n 's/^Instructions  \([0-9]*\)$/\1/p' "$run/summary.txt")
[ -n "$walked" ] && [ "$walked" = "$decoded" ] && ok "synthetic --noretcomp --tsc: in-place decode exact ($walked)" ||
	nok "synthetic --noretcomp --tsc: in-place instruction count" "walked '$walked', decoded '$decoded'"
contains "synthetic --noretcomp --tsc: no decode errors in firmware" "$run/summary.txt" "Errors        0"
expect_rc "synthetic --noretcomp --tsc: efipt insn --run decodes it" 0 $EFIPT insn --run "$run" --stat
contains "synthetic --noretcomp --tsc: host counts every walked instruction" "$TMP/out" "insn: $walked"

# without snapshots the summary still knows the loaded images
boot nosnap 'trace --source synthetic --no-snapshot --decode --insns 100000 --debugcon --shutdown -- \efipt.efi --version'
run=$(rundirs nosnap | head -n 1)
contains "--no-snapshot --decode: instructions attributed to the traced image" "$run/summary.txt" "100.0%  efipt (0x"
expect "--no-snapshot --decode: nothing outside every listed image" sh -c "! grep -q 'outside every listed image' '$run/summary.txt'"
expect "--no-snapshot --decode: no snapshot files written" sh -c "! ls '$run' | grep -q 'images.json\|memmap.json\|mem-'"

boot nopt 'trace --debugcon --shutdown -- \efipt.efi --version'
contains "hw source without PT: refused with the reason" "$TMP/nopt/debugcon.log" "efipt: Intel PT not supported: the CPU vendor is \"AuthenticAMD\" (CPUID.(EAX=00H):EBX,EDX,ECX), not \"GenuineIntel\" (hypervisor TCGTCGTCGTCG) (--source synthetic runs without it)"
contains "hw source without PT: EFI_UNSUPPORTED" "$TMP/nopt/debugcon.log" "efipt: exit EFI_UNSUPPORTED"

boot noimg 'trace --source synthetic --debugcon --shutdown -- \missing\app.efi'
contains "missing image: named" "$TMP/noimg/debugcon.log" "efipt: \\missing\\app.efi: no such file on the volume efipt.efi was loaded from"
contains "missing image: EFI_NOT_FOUND" "$TMP/noimg/debugcon.log" "efipt: exit EFI_NOT_FOUND"

boot badmode 'trace --mode sideways --debugcon --shutdown -- \efipt.efi'
contains "bad trace option: named" "$TMP/badmode/debugcon.log" "sideways"
contains "bad trace option: EFI_INVALID_PARAMETER" "$TMP/badmode/debugcon.log" "efipt: exit EFI_INVALID_PARAMETER"
[ -z "$(rundirs badmode)" ] && ok "bad trace option: nothing written" || nok "bad trace option: nothing written" "a run directory appeared"

boot tracehelp 'trace --help --debugcon --shutdown'
contains "trace --help: the command's own usage" "$TMP/tracehelp/debugcon.log" "usage: efipt.efi trace [OPTIONS] -- IMAGE.efi [ARGS...]"
contains "trace --help: lists the trace options" "$TMP/tracehelp/debugcon.log" "--mode stop|wrap"
[ -z "$(rundirs tracehelp)" ] && ok "trace --help: nothing written" || nok "trace --help: nothing written" "a run directory appeared"
