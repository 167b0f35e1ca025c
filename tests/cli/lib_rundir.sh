# A small run directory for CLI tests (sourced after tests/lib.sh): $D holds
# a hand-assembled loop with a call (see core/pt_flow_check.c) in one page at
# 0x1000, its memory map, images.json (loop.efi), a synthesized trace.pt of
# 3000 instructions and manifest.json.
D=$TMP/run
mkdir -p "$D"
# a hand-assembled loop with a call (see core/pt_flow_check.c), one page at 0x1000
printf '\061\300\377\300\350\007\000\000\000\203\370\020\165\364\377\343\205\300\164\002\220\220\303' >"$TMP/code.bin"
head -c 4096 /dev/zero >>"$TMP/code.bin"
head -c 4096 "$TMP/code.bin" >"$D/mem-0000000000001000.bin"
$EFIPT synth --raw "$D/mem-0000000000001000.bin:0x1000" --start 0x1000 --out "$D/trace.pt" --insns 3000 2>/dev/null
cat >"$D/memmap.json" <<EOM
{"regions":[{"type":"LoaderCode","phys":"0x1000","pages":1,"attr":"0xf","snapshot":"mem-0000000000001000.bin"}]}
EOM
cat >"$D/images.json" <<EOM
{"images":[{"name":"loop.efi","base":"0x1000","size":4096,"code_type":"LoaderCode","path":"","pdb":"","entry":"0x1000"}]}
EOM
# manifest.json for the directory DIR (trace.pt status STATUS, default written)
manifest() {
	tsize=$(stat -c %s "$1/trace.pt" 2>/dev/null || echo 0)
	cat >"$1/manifest.json" <<EOM
{"format":"efipt-run","format_version":1,"efipt_version":"0.1.0","efipt_gitrev":"x",
 "run_id":"20260101-000000-000","started":"2026-01-01T00:00:00","command":"trace",
 "command_line":"trace --decode","cpu":{"vendor":"GenuineIntel","signature":"0x000506e3","family":6,"model":94,"stepping":3},
 "files":[{"name":"trace.pt","size":$tsize,"status":"${2:-written}"}],
 "status":{"result":"ok","efi_status":"EFI_SUCCESS","message":"traced"}}
EOM
}
manifest "$D"
