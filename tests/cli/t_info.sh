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

# write errors on standard output are an error, never a silent truncation
$EFIPT info --caps "$D" >/dev/full 2>"$TMP/err"
rc=$?
[ "$rc" -eq 2 ] && ok "info: /dev/full exits 2" || nok "info: /dev/full exits 2" "exit $rc"
contains "info: /dev/full named" "$TMP/err" "write error on standard output: No space left on device"

# members of the wrong type (docs/format.md) are refused and named
mkdir -p "$TMP/w1" && cp "$D/cpuid.txt" "$TMP/w1/" && sed 's/"family":6/"family":"six"/' "$D/manifest.json" >"$TMP/w1/manifest.json"
expect_rc "info: cpu.family a string" 1 $EFIPT info "$TMP/w1"
contains "info: cpu.family named" "$TMP/err" "\"cpu.family\" must be an integer"
mkdir -p "$TMP/w2" && cp "$D/cpuid.txt" "$TMP/w2/" && sed 's/"command":"caps"/"command":"caps","trace":"str"/' "$D/manifest.json" >"$TMP/w2/manifest.json"
expect_rc "info: trace a string" 1 $EFIPT info "$TMP/w2"
contains "info: trace named" "$TMP/err" "\"trace\" must be an object"

# a NAME.tmp left by an interrupted write is reported
mkdir -p "$TMP/t1" && cp "$D/cpuid.txt" "$D/manifest.json" "$TMP/t1/" && : >"$TMP/t1/trace.pt.tmp"
expect_rc "info: stray .tmp file" 1 $EFIPT info "$TMP/t1"
contains "info: stray .tmp named" "$TMP/err" "trace.pt.tmp: left by an interrupted write"

# a FIFO or a directory where a file is expected: named, and no hang
mkdir -p "$TMP/f1" && mkfifo "$TMP/f1/manifest.json"
expect_rc "info: FIFO manifest" 1 timeout 10 $EFIPT info "$TMP/f1"
contains "info: FIFO manifest named" "$TMP/err" "manifest.json: a FIFO, not a regular file"
mkdir -p "$TMP/f2/manifest.json"
expect_rc "info: directory manifest" 1 $EFIPT info "$TMP/f2"
contains "info: directory manifest named" "$TMP/err" "manifest.json: a directory, not a regular file"
mkdir -p "$TMP/f3" && cp "$D/manifest.json" "$TMP/f3/" && mkfifo "$TMP/f3/cpuid.txt"
expect_rc "info: FIFO cpuid.txt" 1 timeout 10 $EFIPT info "$TMP/f3"
contains "info: FIFO cpuid.txt named" "$TMP/err" "cpuid.txt: listed in manifest.json as written, but not a regular file"
mkdir -p "$TMP/f4/cpuid.txt" && sed 's/"files":\[.*\]/"files":[]/' "$D/manifest.json" >"$TMP/f4/manifest.json"
expect_rc "info: directory cpuid.txt" 1 $EFIPT info "$TMP/f4"
contains "info: directory cpuid.txt named" "$TMP/err" "cpuid.txt: a directory, not a regular file"

# terminal escapes in run-directory strings are shown as text
mkdir -p "$TMP/e1" && cp "$D/cpuid.txt" "$TMP/e1/" && sed 's/"command_line":"caps --shutdown"/"command_line":"caps \\u001b[2J\\u001b]0;owned\\u0007 \\u009b31m"/' "$D/manifest.json" >"$TMP/e1/manifest.json"
expect_rc "info: escapes in the command line" 0 $EFIPT info "$TMP/e1"
if grep -q "$(printf '\033')" "$TMP/out" || grep -q "$(printf '\007')" "$TMP/out" || grep -q "$(printf '\302\233')" "$TMP/out"; then
	nok "info: no raw control characters" "$(grep -a Command "$TMP/out" | od -c | head -3)"
else
	ok "info: no raw control characters"
fi
contains "info: ESC shown as \\x1b" "$TMP/out" 'Command      caps \x1b[2J\x1b]0;owned\x07 \u009b31m'
mkdir -p "$TMP/e2" && cp "$D/cpuid.txt" "$TMP/e2/" && sed 's/"command":"caps"/"command":"caps","trace":{"source":"\\u001b[2Jsynthetic","bytes":1}/' "$D/manifest.json" >"$TMP/e2/manifest.json"
expect_rc "info: escapes in trace.source" 0 $EFIPT info "$TMP/e2"
contains "info: trace.source shown escaped" "$TMP/out" 'Trace        \x1b[2Jsynthetic, 1 bytes'
# a long command line (efipt.args may hold kilobytes) is printed whole
long=$(head -c 3000 /dev/zero | tr '\0' 'a')
mkdir -p "$TMP/e3" && cp "$D/cpuid.txt" "$TMP/e3/" && sed "s/\"command_line\":\"caps --shutdown\"/\"command_line\":\"caps $long\"/" "$D/manifest.json" >"$TMP/e3/manifest.json"
expect_rc "info: long command line" 0 $EFIPT info "$TMP/e3"
contains "info: long command line whole" "$TMP/out" "Command      caps $long"

# a run directory with code: info checks the snapshots and images.json as
# the decoding commands read them, refusing what they refuse with the same
# message (memmap.json's snapshot names, its regions, images.json)
C=$TMP/code
mkdir -p "$C"
printf '\061\300\377\300\350\007\000\000\000\203\370\020\165\364\377\343\205\300\164\002\220\220\303' >"$C/mem-0000000000001000.bin"
head -c $((4096 - 23)) /dev/zero >>"$C/mem-0000000000001000.bin"
$EFIPT synth --raw "$C/mem-0000000000001000.bin:0x1000" --start 0x1000 --out "$C/trace.pt" --insns 300 2>/dev/null
printf '{"regions":[{"type":"LoaderCode","phys":"0x1000","pages":1,"attr":"0xf","snapshot":"mem-0000000000001000.bin"}]}' >"$C/memmap.json"
printf '{"images":[{"name":"Loop","base":"0x1000","size":4096}]}' >"$C/images.json"
run_manifest "$C" trace.pt memmap.json images.json mem-0000000000001000.bin
expect_rc "info: a run with code" 0 $EFIPT info "$C"
contains "info: its code summed up" "$TMP/out" "Code         1 snapshots (4 KiB), 1 images"
# damaged: NAME FILE CONTENT: info and decode refuse it alike
damaged() {
	what=$1 file=$2
	d=$TMP/dmg-$(echo "$what" | tr -c 'a-z0-9\n' '_')
	rm -rf "$d"
	cp -r "$C" "$d"
	printf '%s' "$3" >"$d/$file"
	run_manifest "$d" trace.pt memmap.json images.json mem-0000000000001000.bin
	$EFIPT decode "$d" >/dev/null 2>"$TMP/dec.err"
	expect_rc "info: $what: damaged (exit 1)" 1 $EFIPT info "$d"
	want=$(sed -n 's/^efipt decode: //p' "$TMP/dec.err" | head -1)
	if [ -n "$want" ] && grep -qF -- "efipt info: $want" "$TMP/err"; then
		ok "info: $what: decode's message ($want)"
	else
		nok "info: $what: decode's message" "decode: $(cat "$TMP/dec.err"); info: $(cat "$TMP/err")"
	fi
}
damaged "snapshot ../.." memmap.json '{"regions":[{"type":"LoaderCode","phys":"0x1000","pages":1,"snapshot":"../.."}]}'
damaged "snapshot /etc/passwd" memmap.json '{"regions":[{"type":"LoaderCode","phys":"0x1000","pages":1,"snapshot":"/etc/passwd"}]}'
damaged "malformed memmap.json" memmap.json '{"regions":[{"type":"LoaderCode","phys":4096,"pages":1,"snapshot":"mem-0000000000001000.bin"}]}'
damaged "memmap.json regions not an array" memmap.json '{"regions":{}}'
damaged "a snapshot of another size" memmap.json '{"regions":[{"type":"LoaderCode","phys":"0x1000","pages":2,"snapshot":"mem-0000000000001000.bin"}]}'
deep=$(python3 -c 'print("{\"images\": " + "[" * 3000 + "]" * 3000 + "}")')
damaged "images.json nested too deep" images.json "$deep"
damaged "an image past 2^64" images.json '{"images":[{"name":"Loop","base":"0xfffffffffffff000","size":8192}]}'
# overlapping images: valid, and said as the decoding commands say it
printf '{"images":[{"name":"Loop","base":"0x1000","size":4096},{"name":"Inner","base":"0x1010","size":16}]}' >"$C/images.json"
run_manifest "$C" trace.pt memmap.json images.json mem-0000000000001000.bin
expect_rc "info: nested images: valid" 0 $EFIPT info "$C"
contains "info: nested images said" "$TMP/err" "efipt info: image Inner (0x1010-0x101f) lies inside image Loop (0x1000-0x1fff): its addresses count for Inner"
