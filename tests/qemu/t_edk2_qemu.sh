# The firmware's own boot trace, really executed: OVMF with EfiptPkg
# (make ovmf-efipt) under efipt qemu. Without PT, EfiptPei runs the EPT1
# marker where it would start PT (memory discovered, in PEI) and EfiptDxe
# EPT0 where it stops it (ReadyToBoot), so efipt-qemu.so traces exactly
# that span; efipt.efi collect then writes the run directory efipt qemu
# --esp merges. It must decode with zero errors to as many instructions as
# the logger (tests/qemu/insnlog.c, in the same QEMU, from the start marker
# to the stop marker on its own) counted, the first ones the logged ones;
# PEI modules named from the volumes, DXE images from EfiptDxe's record;
# efipt top with the build's symbols names DxeCore's and drivers' functions.
. tests/lib.sh
. tests/qemu/lib_qemu.sh

edk2_ovmf "EfiptPkg under efipt qemu"
plugin_output "EfiptPkg under efipt qemu"
# the logger writes 2M execution callbacks (a REP iteration each); 1M
# decoded instructions are within them
HEAD=2000000
WINDOW=1000000
d=$TMP/span
mkdir -p "$d"
sh ovmf/mkesp.sh --image "$d/esp.img" --args 'collect --debugcon --shutdown' >/dev/null
OVMF_CODE=$EOVMF OVMF_VARS=$EVARS \
	QEMU_EXTRA="-plugin $LOGGER,out=$d/log.bin,from=marker,to=marker,head=$HEAD,count=$d/count.txt" \
	nice -n 10 sh ovmf/qemu_esp.sh "$EFIPT" "$d/esp.img" "$d" 300 --esp "$d/esp.img" \
	--start marker --stop marker >"$d/out" 2>"$d/err"
rc=$?
[ "$rc" -eq 0 ] && ok "span: efipt qemu traced the boot from EfiptPei to EfiptDxe, collect's run merged" ||
	nok "span: efipt qemu traced and merged" "exit $rc: $(head -c 400 "$d/err"); $(tail -c 300 "$d/debugcon.log")"
contains "span: the start marker is in EfiptPei" "$d/out" "the start marker is in EfiptPei)"
expect_rc "span: efipt info accepts the merged run" 0 $EFIPT info "$d/run"
expect_rc "span: efipt decode reads it" 0 $EFIPT decode "$d/run"
mv "$TMP/out" "$d/decode.txt"
contains "span: zero decode errors" "$d/decode.txt" "Errors        0"
if out=$(python3 - "$d" <<'EOF' 2>&1
import json, re, sys
d = sys.argv[1]
m = json.load(open(d + '/run/manifest.json'))
t = m['trace']
dec = int(re.search(r'^Instructions +(\d+)', open(d + '/decode.txt').read(), re.M).group(1))
w = open(d + '/count.txt').read().split()
ran = int(w[3])
assert t['stopped_by'] == 'stop' and t['marker_image'] == 'EfiptPei', t
assert dec == t['insns'] == ran and ran > 50 * 10**6, (dec, t['insns'], ran)
assert t.get('code_conflicts', 0) == 0, t
b = m['boot_trace']
assert b['markers'] and b['status'] == 'unsupported' and b['stopped_at'] == 'ready-to-boot', b
print(ran)
EOF
); then
	ok "span: decoded = executed, $out instructions from PEI to ReadyToBoot (logger's count), no code overwritten"
else
	nok "span: decoded = executed instruction count" "$(echo "$out" | tail -c 400)"
fi
$EFIPT insn --run "$d/run" --no-inst 2>/dev/null | head -n "$WINDOW" >"$d/insn.txt"
fc=$(python3 -c "import json; print(json.load(open('$d/run/manifest.json'))['trace']['first_call'])")
if python3 tests/qemu/insnlog_cmp.py "$d/log.bin" "$d/insn.txt" "$d/run/manifest.json" "$fc" \
	--head >"$d/cmp.txt" 2>&1; then
	ok "span: the first instructions, PEI's, are the executed ones ($(cat "$d/cmp.txt"))"
else
	nok "span: the first instructions are the executed ones" "$(head -c 400 "$d/cmp.txt")"
fi
expect "span: PEI modules named from the volumes, DXE images from EfiptDxe's record" python3 -c "
import re, json; s=open('$d/decode.txt').read()
for n in ('DxeCore', 'HiiDatabase', 'CpuDxe'):
    assert re.search(r'%%  %s \(0x' % n, s), (n, s)
im={i['name']: i for i in json.load(open('$d/run/images.json'))['images']}
for n in ('EfiptPei', 'PlatformPei', 'PeiCore', 'DxeIpl'):
    assert im[n]['phase']=='PEI', im[n]
assert im['DxeCore']['phase']=='DXE' and im['EfiptDxe']['phase']=='DXE'"
expect_rc "span: efipt top with the build's symbols" 0 $EFIPT top "$d/run" --symbols "$EBUILD" --format jsonl
mv "$TMP/out" "$d/top.jsonl"
expect "span: top names DxeCore's functions and the drivers'" python3 -c "
import json
rows=[json.loads(l) for l in open('$d/top.jsonl') if l.strip()]
named=[r for r in rows if r.get('function') and '[' not in r['function']]
core=[r for r in named if r['image']=='DxeCore']
drv=[r for r in named if r['image'] not in ('DxeCore',)]
assert len(core) > 20 and len(drv) > 20, (len(core), len(drv))
fs={r['function'] for r in core}
assert 'CoreConnectController' in fs and 'CoreInstallProtocolInterface' in fs, sorted(fs)[:40]
assert any(r['image']=='EfiptDxe' for r in named), 'EfiptDxe'"
# the other views of the same whole boot, with the build's symbols
B="--symbols $EBUILD"
expect_rc "span: efipt flame" 0 $EFIPT flame "$d/run" $B
mv "$TMP/out" "$d/flame.txt"
expect "span: flame's stacks weigh exactly the decoded instructions, DxeCore's under their callers" python3 -c "
import re, json
n=0; deep=0
for l in open('$d/flame.txt'):
    s, c = l.rsplit(' ', 1); n += int(c)
    deep += 'DxeCore\`CoreConnectController;' in s
dec=int(re.search(r'^Instructions +(\d+)', open('$d/decode.txt').read(), re.M).group(1))
assert n == dec, (n, dec)
assert deep > 0, 'no stack under CoreConnectController'"
expect_rc "span: efipt calls under one DxeCore function" 0 $EFIPT calls "$d/run" $B \
	--function DxeCore\`CoreConnectController --depth 2
mv "$TMP/out" "$d/calls.txt"
expect "span: calls shows CoreConnectController and what it called" python3 -c "
l=[x for x in open('$d/calls.txt') if x.strip()]
assert any('CoreConnectController' in x for x in l), l[:5]
assert len({x.split()[-1] for x in l}) > 2, l[:10]"
expect_rc "span: efipt coverage (JSON)" 0 $EFIPT coverage "$d/run" --format json -o "$d/cov.json"
if out=$(python3 - "$d" <<'PY' 2>&1
import json, re, sys
d = sys.argv[1]
c = json.load(open(d + '/cov.json'))
im = {i['path']: i for i in c['images']}
for n in ('PlatformPei', 'DxeIpl', 'DxeCore', 'CpuDxe', 'BdsDxe'):
    n += '.efi'
    assert im[n]['executed'] > 0 and im[n]['blocks'] > 0, (n, im.get(n))
dec = int(re.search(r'^Instructions +(\d+)', open(d + '/decode.txt').read(), re.M).group(1))
t = c['total']
assert t['executed'] + c['outside'] == dec and c['decode_errors'] == 0, (t, c['outside'], dec)
PY
); then
	ok "span: coverage counts PEI modules and DXE drivers; executed + outside = decoded"
else
	nok "span: coverage counts PEI modules and DXE drivers; executed + outside = decoded" "$(echo "$out" | tail -c 600)"
fi
# DxeCore runs under PeiCore, DxeLoadCore and SwitchStack (which never
# returns): its functions are 4 and more deep
expect_rc "span: efipt timeline" 0 $EFIPT timeline "$d/run" $B --depth 8 --min-dur 100000 -o "$d/tl.json"
expect "span: the timeline has DxeCore's and PEI's slices" python3 -c "
import json
t=json.load(open('$d/tl.json'))
ev=t['traceEvents'] if isinstance(t, dict) else t
names=' '.join(str(e.get('name', '')) for e in ev)
assert 'CoreConnectController' in names or 'CoreStartImage' in names, names[:300]
assert 'PeiCore' in names, names[:300]"

# The same firmware from the reset vector, without efipt.efi: its modules
# named from the flash (SEC, PEI in place) and by their code in the
# snapshots (PEI's copies, DXE drivers: host/qemu/qemu_fvfind.c), so the
# build's symbols name DxeCore's and the drivers' functions in a boot
# nothing in the firmware recorded
r=$TMP/reset
mkdir -p "$r"
cp "$EVARS" "$r/vars.fd"
# shellcheck disable=SC2046
expect_rc "reset: efipt qemu traces the build's OVMF from the reset vector" 0 nice -n 10 \
	timeout 300 $EFIPT qemu -o "$r/run" --start reset --limit 400000000 -- $(machine_args) \
	-icount shift=3,sleep=off -drive if=pflash,format=raw,unit=0,readonly=on,file="$EOVMF" \
	-drive if=pflash,format=raw,unit=1,file="$r/vars.fd"
contains "reset: modules found loaded in memory by their code" "$TMP/out" "images found loaded in memory"
expect_rc "reset: efipt decode" 0 $EFIPT decode "$r/run"
mv "$TMP/out" "$r/decode.txt"
expect "reset: under 1% of the instructions outside every module" python3 -c "
import re
m = re.search(r'([\d.]+)%  \(outside every listed image\)', open('$r/decode.txt').read())
assert m is None or float(m.group(1)) < 1.0, m.group(0)"
expect_rc "reset: efipt top with the build's symbols" 0 $EFIPT top "$r/run" $B --format jsonl
mv "$TMP/out" "$r/top.jsonl"
# with symbols the summary's counts per image come from the call-stack
# model's functions: the same summary, on a boot of a hundred images
expect_rc "reset: efipt decode with the build's symbols" 0 $EFIPT decode "$r/run" $B
sed '/^top functions:$/,$d' "$TMP/out" | sed '$d' >"$r/decode_sym.txt"
if cmp -s "$r/decode.txt" "$r/decode_sym.txt"; then
	ok "reset: decode's summary is the same with symbols"
else
	nok "reset: decode's summary is the same with symbols" "$(diff "$r/decode.txt" "$r/decode_sym.txt" | head -5)"
fi
expect "reset: top names DxeCore's functions and the drivers', found by their code" python3 -c "
import json
im = {i['name']: i for i in json.load(open('$r/run/images.json'))['images']}
assert im['DxeCore']['code_type'] == 'FirmwareVolumeLoaded', im['DxeCore']
rows = [json.loads(l) for l in open('$r/top.jsonl') if l.strip()]
named = [r for r in rows if r.get('function') and '[' not in r['function']]
core = {r['function'] for r in named if r['image'] == 'DxeCore'}
drv = {r['image'] for r in named if r['image'] not in ('DxeCore', 'SecMain', 'PeiCore')}
assert 'CoreConnectController' in core and len(core) > 20, sorted(core)[:40]
assert len(drv) > 5, sorted(drv)"
