# efipt info on run directories: a good one, and damaged ones.
. tests/lib.sh
D=$TMP/run
mkdir -p "$D"
cp tests/data/cpu-profiles/skylake-s-core-i7-6700k.txt "$D/cpuid.txt"
size=$(stat -c %s "$D/cpuid.txt")
cat >"$D/manifest.json" <<EOM
{"format":"efipt-run","format_version":1,"efipt_version":"0.1.0","efipt_gitrev":"x",
 "run_id":"20260101-000000-000","started":"2026-01-01T00:00:00","command":"caps",
 "command_line":"caps --shutdown","firmware":{"vendor":"EDK II","revision":"0x1","uefi":"2.7"},
 "cpu":{"vendor":"GenuineIntel","signature":"0x000506e3","family":6,"model":94,"stepping":3},
 "files":[{"name":"cpuid.txt","size":$size,"status":"written"}],
 "status":{"result":"ok","efi_status":"EFI_SUCCESS","message":"Intel PT supported"}}
EOM
expect_rc "info: valid run directory" 0 $EFIPT info "$D"
contains "info: shows result" "$TMP/out" "Result       ok (EFI_SUCCESS): Intel PT supported"
contains "info: summarises caps" "$TMP/out" "Intel PT     supported (ToPA multi-entry"
expect_rc "info: manifest path accepted" 0 $EFIPT info "$D/manifest.json"
expect_rc "info: --caps" 0 $EFIPT info --caps "$D"
contains "info: --caps full report" "$TMP/out" "EBX[2]   IP filtering and TraceStop"

# every truncation of the manifest is a clean error, never a crash
len=$(stat -c %s "$D/manifest.json")
bad=0
for n in $(seq 0 7 $((len - 2))); do
	mkdir -p "$TMP/t"
	cp "$D/cpuid.txt" "$TMP/t/"
	head -c "$n" "$D/manifest.json" >"$TMP/t/manifest.json"
	$EFIPT info "$TMP/t" >/dev/null 2>"$TMP/terr"
	rc=$?
	if [ "$rc" -ne 1 ] || ! grep -q "manifest.json" "$TMP/terr"; then bad=$((bad + 1)); fi
done
[ "$bad" -eq 0 ] && ok "info: every truncated manifest rejected with exit 1" || nok "info: truncated manifests" "$bad cases misbehaved"

sed 's/"size":[0-9]*/"size":99999/' "$D/manifest.json" >"$TMP/m" && mkdir -p "$TMP/s" && cp "$TMP/m" "$TMP/s/manifest.json" && cp "$D/cpuid.txt" "$TMP/s/"
expect_rc "info: size mismatch" 1 $EFIPT info "$TMP/s"
contains "info: size mismatch named" "$TMP/err" "bytes, manifest.json says 99999"
mkdir -p "$TMP/m1" && sed 's/"efipt-run"/"other"/' "$D/manifest.json" >"$TMP/m1/manifest.json"
expect_rc "info: wrong format" 1 $EFIPT info "$TMP/m1"
contains "info: wrong format named" "$TMP/err" "format is \"other\""
mkdir -p "$TMP/m2" && sed 's/"result":"ok"/"result":7/' "$D/manifest.json" >"$TMP/m2/manifest.json"
expect_rc "info: wrong type" 1 $EFIPT info "$TMP/m2"
contains "info: wrong type named" "$TMP/err" "\"status.result\" must be a string"
mkdir -p "$TMP/m3" && sed 's/"cpuid.txt"/"..\/..\/etc\/passwd"/' "$D/manifest.json" >"$TMP/m3/manifest.json"
expect_rc "info: path in file name refused" 1 $EFIPT info "$TMP/m3"
mkdir -p "$TMP/m4" && head -c 5000 /dev/urandom >"$TMP/m4/manifest.json"
expect_rc "info: random bytes" 1 $EFIPT info "$TMP/m4"
expect_rc "info: not a run directory" 1 $EFIPT info "$TMP"
contains "info: missing manifest named" "$TMP/err" "manifest.json: No such file or directory"
expect_rc "info: no argument" 2 $EFIPT info
