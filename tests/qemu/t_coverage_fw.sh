# efipt.efi trace --decode writes coverage.drcov into the run directory:
# a valid drcov (checked by the tests' own reader), listed in the manifest,
# naming the traced image as its file, and equal to what `efipt coverage`
# computes from the same run directory on the host.
. tests/lib.sh
. tests/qemu/lib_qemu.sh

boot cov 'trace --source synthetic --decode --insns 100000 --debugcon --shutdown -- \efipt.efi --version'
run=$(rundirs cov | head -n 1)
F=$run/coverage.drcov
if [ -f "$F" ]; then ok "trace --decode: coverage.drcov written"; else nok "trace --decode: coverage.drcov written" "$(ls "$run")"; fi
expect "coverage.drcov: drcov layout (independent reader)" python3 tests/cli/drcov_check.py "$F"
contains "coverage.drcov: the traced image is a module named efipt.efi" "$F" ", efipt.efi"
expect "coverage.drcov: in the manifest's files list with its size" python3 -c "
import json, os; m = json.load(open('$run/manifest.json'))
f = [x for x in m['files'] if x['name'] == 'coverage.drcov']
assert len(f) == 1 and f[0]['status'] == 'written' and f[0]['size'] == os.path.getsize('$F'), f"
expect_rc "efipt info accepts the run" 0 $EFIPT info "$run"
expect_rc "host: efipt coverage of the run directory" 0 $EFIPT coverage "$run" -o "$TMP/host.drcov"
if cmp -s "$F" "$TMP/host.drcov"; then ok "firmware and host coverage are identical"; else nok "firmware and host coverage are identical" "$(cmp "$F" "$TMP/host.drcov")"; fi
expect_rc "host: text report names efipt.efi" 0 $EFIPT coverage "$run" --format text
contains "host: text report names efipt.efi" "$TMP/out" "efipt.efi"
