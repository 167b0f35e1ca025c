# efipt.efi selftest under QEMU+OVMF: the core checks run in firmware, the
# #GP guard turns a real fault into an error, tracing is skipped (no PT),
# and the CI reports (JSON, JUnit XML) land in the run directory.
. tests/lib.sh
. tests/qemu/lib_qemu.sh
boot selftest "selftest --debugcon --shutdown"
L=$TMP/selftest/debugcon.log
contains "selftest: packet codec passes in firmware" "$L" "selftest packet-codec             PASS"
contains "selftest: x86 decoder passes in firmware" "$L" "selftest x86-decoder              PASS"
contains "selftest: flow decoder passes in firmware" "$L" "selftest flow-decoder             PASS"
contains "selftest: #GP guard catches a real fault" "$L" "selftest gp-guard                 PASS"
contains "selftest: tracing skipped with the reason" "$L" "selftest trace                    SKIP: Intel PT not supported: the CPU vendor is \"AuthenticAMD\""
contains "selftest: exits EFI_UNSUPPORTED" "$L" "efipt: exit EFI_UNSUPPORTED"
run=$(rundirs selftest | head -n 1)
expect_rc "selftest: efipt info accepts the run" 0 $EFIPT info "$run"
expect "selftest: selftest.json lists the cases" python3 -c "
import json; d=json.load(open('$run/selftest.json'))
names=[c['name'] for c in d['cases']]
assert names[:4]==['packet-codec','x86-decoder','flow-decoder','gp-guard'], names
assert d['failed']==0 and d['skipped']>=1"
expect "selftest: selftest.xml is JUnit XML" python3 -c "
import xml.etree.ElementTree as ET; r=ET.parse('$run/selftest.xml').getroot()
assert r.tag=='testsuite' and int(r.get('tests'))==len(r.findall('testcase')) and r.get('failures')=='0'"
contains "selftest: ToPA buffer laid out in firmware memory" "$L" "selftest output-topa              PASS: 98304 KiB in 2 regions, 1 ToPA table"
contains "selftest: single-range buffer laid out" "$L" "selftest output-single            PASS: 1024 KiB in 1 region, 0 ToPA tables"
