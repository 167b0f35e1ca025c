# efipt recover --linux over recorder regions in files (--efivars DIR,
# --mem FILE:BASE in place of efivarfs and /dev/mem): regions laid out as
# efipt.efi lays them out, their trace written by the PT model
# (test_recorder --linux-fixtures): a trace that went round its ring (its
# end from the newest PSB+ by TSC), one that never did (the zero fill), one
# efipt stopped (the recorded end); each run directory must hold exactly
# the expected bytes and pass efipt info. Then bad input: no variable, a
# damaged variable, header or layout, a stale generation, a region past
# the end of memory, an existing output, a write that fails half-way.
. tests/lib.sh

B=${EFIPT_BUILD:-build}
if ! "$B/tests/test_recorder" --linux-fixtures "$TMP/fx" >/dev/null 2>&1; then
	nok "recover --linux: fixtures" "$B/tests/test_recorder --linux-fixtures failed"
	exit 0
fi
# rec NAME FIXTURE: efipt recover --linux over FIXTURE into $TMP/NAME
rec() {
	f=$TMP/fx/$2
	$EFIPT recover --linux --efivars "$f/efivars" --mem "$f/mem.bin:$(cat "$f/phys")" \
		-o "$TMP/$1"
}

for c in wrapped:psb_tsc:true unwrapped:unwrapped:true stopped:stopped:false; do
	fx=${c%%:*} rest=${c#*:}
	end=${rest%%:*} live=${rest#*:}
	expect_rc "$fx: recovered" 0 rec "run-$fx" "$fx"
	contains "$fx: says what it recovered" "$TMP/out" "efipt recover: recovered "
	if cmp -s "$TMP/run-$fx/trace.pt" "$TMP/fx/$fx/expected.pt"; then
		ok "$fx: trace.pt holds exactly the trace the model wrote there"
	else
		nok "$fx: trace.pt holds exactly the trace the model wrote there" \
			"$(cmp "$TMP/run-$fx/trace.pt" "$TMP/fx/$fx/expected.pt" 2>&1)"
	fi
	expect_rc "$fx: efipt info accepts the run directory" 0 $EFIPT info "$TMP/run-$fx"
	expect "$fx: manifest: recovered by the Linux reader, end $end, live $live" python3 -c "
import json; m = json.load(open('$TMP/run-$fx/manifest.json')); r = m['recovered']
assert m['command'] == 'recover' and r['reader'] == 'efipt recover --linux', r
assert r['end'] == '$end' and r['live'] == $( [ "$live" = true ] && echo True || echo False ), r
assert 'this_boot' not in r and r['from_boot'] == 3 and r['generation'] == 7, r
assert m['trace']['recovered'] and m['trace']['source'] == 'hw' and m['cpu']['pt']
assert m['status']['result'] == 'ok' and [f['status'] for f in m['files']].count('written') == len(m['files'])
assert len(json.load(open('$TMP/run-$fx/images.json'))['images']) == 4"
done

F=$TMP/fx/wrapped
VAR=$F/efivars/EfiptRecorder-aa730c61-b6f5-41ef-870d-4e00374d9897
PHYS=$(cat "$F/phys")
# a copy of the wrapped fixture changed by python code (v: variable bytes,
# m: region bytes; crc(): zlib's CRC-32, the one the format uses)
damaged() {
	rm -rf "$TMP/bad"
	cp -r "$F" "$TMP/bad"
	python3 - "$TMP/bad" "$1" <<'EOF'
import struct, sys, zlib
d, code = sys.argv[1], sys.argv[2]
vp = d + "/efivars/EfiptRecorder-aa730c61-b6f5-41ef-870d-4e00374d9897"
v, m = bytearray(open(vp, "rb").read()), bytearray(open(d + "/mem.bin", "rb").read())
def reseal():
    v[4 + 52:4 + 56] = b"\0" * 4
    v[4 + 52:4 + 56] = struct.pack("<I", zlib.crc32(bytes(v[4:])))
hoff = struct.unpack_from("<Q", v, 4 + 32)[0]
exec(code)
open(vp, "wb").write(v)
open(d + "/mem.bin", "wb").write(m)
EOF
}
bad() {
	$EFIPT recover --linux --efivars "$TMP/bad/efivars" --mem "$TMP/bad/mem.bin:$PHYS" -o "$TMP/out-$1"
}
# refused NAME RC TEXT: the damaged copy is refused with RC and TEXT, no run directory
refused() {
	expect_rc "bad input: $1: refused (exit $2)" "$2" bad "$1"
	contains "bad input: $1: says why" "$TMP/err" "$3"
	[ ! -e "$TMP/out-$1" ] && ok "bad input: $1: no run directory" ||
		nok "bad input: $1: no run directory" "$TMP/out-$1 exists"
}

mkdir -p "$TMP/empty"
expect_rc "no variable: exit 1" 1 $EFIPT recover --linux --efivars "$TMP/empty" --mem "$F/mem.bin:$PHYS" -o "$TMP/none"
contains "no variable: says there is no recorder" "$TMP/err" "no recorder: efipt.efi trace --recorder arms one"
damaged 'v[4 + 24] ^= 1'
refused "a damaged variable" 1 "is damaged (CRC-32"
damaged 'm[hoff + 0x500] ^= 0x80'
refused "a damaged header" 1 "is damaged (CRC-32"
damaged 'm[hoff:hoff + 4096] = bytes((i * 7 + 3) & 255 for i in range(4096))'
refused "garbage where the header was" 1 "no recorder header at"
damaged 'v[4 + 40] += 1; reseal()'
refused "a stale generation" 1 "(stale)"
damaged 'lay = struct.unpack_from("<Q", m, hoff + 0x110 + 8)[0]; m[lay + 9] ^= 4'
refused "a damaged layout section" 1 "the layout section is damaged"
head -c 8192 "$F/mem.bin" >"$TMP/short.bin"
expect_rc "a region past the end of memory: exit 2" 2 $EFIPT recover --linux \
	--efivars "$F/efivars" --mem "$TMP/short.bin:$PHYS" -o "$TMP/short"
contains "a region past the end of memory: names the file and address" "$TMP/err" "short.bin at 0x"
mkdir -p "$TMP/exists"
expect_rc "an existing output directory: exit 2" 2 $EFIPT recover --linux \
	--efivars "$F/efivars" --mem "$F/mem.bin:$PHYS" -o "$TMP/exists"
contains "an existing output directory: says so" "$TMP/err" "File exists"
expect_rc "without --linux: usage (exit 2)" 2 $EFIPT recover -o "$TMP/x"
contains "without --linux: says which" "$TMP/err" "give --linux"
expect_rc "--help" 0 $EFIPT recover --help
contains "--help: names the variable" "$TMP/out" "EfiptRecorder-aa730c61-b6f5-41ef-870d-4e00374d9897"

# a write that fails half-way (the file size limit): only a manifest saying why
(
	trap '' XFSZ
	ulimit -f 8
	$EFIPT recover --linux --efivars "$F/efivars" --mem "$F/mem.bin:$PHYS" -o "$TMP/full" \
		>"$TMP/out" 2>"$TMP/err"
	echo $? >"$TMP/rc"
)
[ "$(cat "$TMP/rc")" = 2 ] && ok "a write that fails: exit 2" ||
	nok "a write that fails: exit 2" "exit $(cat "$TMP/rc"): $(head -c 300 "$TMP/err")"
expect "a write that fails: only the manifest is left, saying failed" python3 -c "
import json, os
assert os.listdir('$TMP/full') == ['manifest.json'], os.listdir('$TMP/full')
m = json.load(open('$TMP/full/manifest.json'))
assert m['status']['result'] == 'failed' and 'writing the run directory failed' in m['status']['message']"
