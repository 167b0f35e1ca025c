# CR3 filtering of emulated traces (efipt qemu --cr3 V, the plugin's cr3=V;
# registers: QEMU 9.0 on), SDM 33.2.5.2, on the CR3 switch into DXE of an
# OVMF boot: PEI runs with a CR3 of its own (0 where 32-bit PEI runs without
# paging, Debian 12's OVMF; the reset vector's page tables where PEI is
# 64-bit, Debian 13's), DxeIpl loads the DXE page tables with a MOV CR3.
# Tracing the DXE CR3 begins after that MOV CR3 (PIP, TIP.PGE); tracing
# PEI's ends at it (PIP, TIP.PGD without IP, bound to the MOV CR3: Table
# 33-21). Both decode without errors and libipt agrees.
. tests/lib.sh
. tests/qemu/lib_qemu.sh

plugin_output "cr3 filter"
qmajor=$(qemu-system-x86_64 --version | sed -n 's/^QEMU emulator version \([0-9]*\)\..*/\1/p')
if [ "${qmajor:-0}" -lt 9 ]; then
	ok "cr3 filter: SKIP, QEMU $qmajor has no plugin registers (t_qemu_trace_opts checks the refusal)"
	exit 0
fi
# cr3_run DIR PLUGIN-OPTIONS [QEMU...]: OVMF (no disk) with the plugin
cr3_run() {
	qd=$1 qo=$2
	shift 2
	mkdir -p "$qd"
	# shellcheck disable=SC2046
	qemu_run "$qd" 300 $(ovmf_args "$qd") -plugin "$PLUGIN,dir=$qd/run,$qo" "$@"
}

# the DXE CR3: where a window in DXE starts (dxe_after)
need_dxe "cr3 filter" "$TMP/probe"
cr3_run "$TMP/w" after=$DXE,limit=1000,exit=on
X=$(python3 -c "import json; print(json.load(open('$TMP/w/run/manifest.json'))['trace']['cr3'])" 2>/dev/null)
case $X in
0x[0-9a-f]*[1-9a-f]*) ok "cr3 filter: DXE's CR3 is $X" ;;
*) nok "cr3 filter: DXE's CR3" "none in $TMP/w/run/manifest.json: $(head -c 300 "$TMP/w/qemu.log")"; exit 0 ;;
esac

# cr3=X: ContextEn from DxeIpl's MOV CR3 on
d=$TMP/e
cr3_run "$d" "start=protected,cr3=$X,limit=200000,exit=on"
expect "cr3=$X: the manifest has CR3Filter, the match and one ContextEn change" python3 -c "
import json; t = json.load(open('$d/run/manifest.json'))['trace']
assert int(t['rtit_ctl'], 16) & (1 << 7) and int(t['cr3_match'], 16) == $X, t
assert t['context_changes'] == 1 and t['insns'] == 200000 and t['stopped_by'] == 'limit', t"
expect_rc "cr3=$X: efipt insn --run decodes without errors" 0 $EFIPT insn --run "$d/run" --no-inst
mv "$TMP/out" "$d/insn.txt"
expect "cr3=$X: 200000 instructions decoded" sh -c "[ \$(grep -vc '^\[' '$d/insn.txt') -eq 200000 ]"
$EFIPT packets "$d/run/trace.pt" >"$d/packets.txt" 2>&1
expect "cr3=$X: PSB+ without IP, then PIP($X), MODE.Exec, TIP.PGE at the first traced instruction" python3 -c "
import json
t = json.load(open('$d/run/manifest.json'))['trace']
k = [l.split()[1:] for l in open('$d/packets.txt') if len(l.split()) > 1]
i = next(n for n, x in enumerate(k) if x[0] == 'tip.pge')
assert k[i][-1] == t['first_ip'] and k[i - 1][0] == 'mode.exec', k[i - 2:i + 1]
assert k[i - 2] == ['pip', 'cr3=$X'], k[i - 2:i + 1]
assert not any(x[0] in ('fup', 'tip', 'tip.pgd') for x in k[:i]), k[:i]"
libipt_agrees "cr3=$X" "$d"
# efipt qemu --cr3: the same through the CLI
# shellcheck disable=SC2046
expect_rc "efipt qemu --cr3 $X --start protected --limit 1000" 0 nice -n 10 timeout 300 \
	$EFIPT qemu -o "$TMP/cli/run" --start protected --cr3 "$X" --limit 1000 -- $(ovmf_args "$TMP/cli")
expect "efipt qemu --cr3: the plugin filtered by it" python3 -c "
import json; t = json.load(open('$TMP/cli/run/manifest.json'))['trace']
assert int(t['cr3_match'], 16) == $X and t['context_changes'] == 1 and t['insns'] == 1000, t"
expect_rc "efipt qemu --cr3: decodes without errors" 0 $EFIPT decode "$TMP/cli/run"

# PEI's CR3: the one at DxeIpl's MOV CR3 (3 bytes before where cr3=X
# began: checked by the decode below), from a run of that instruction alone.
# (Instruction counts before the switch differ from run to run by millions
# without -icount, which would make the boot take minutes more: no window
# by count.)
F=$(python3 -c "import json; print(json.load(open('$d/run/manifest.json'))['trace']['first_ip'])")
M=$(printf '0x%x' $((F - 3)))
cr3_run "$TMP/p" "start=$M,stop=$F,exit=on"
P=$(python3 -c "import json; print(json.load(open('$TMP/p/run/manifest.json'))['trace']['cr3'])" 2>/dev/null)
case $P in
0x[0-9a-f]*) ok "cr3 filter: PEI's CR3 at the MOV CR3 at $M is $P" ;;
*) nok "cr3 filter: PEI's CR3" "none in $TMP/p/run/manifest.json: $(head -c 300 "$TMP/p/qemu.log")"; exit 0 ;;
esac

# cr3=P from the MOV CR3 itself to the next instruction: the MOV CR3 is
# traced, then its PIP and a TIP.PGD without IP
d=$TMP/d
cr3_run "$d" "start=$M,cr3=$P,stop=$F,exit=on"
expect "cr3=$P: one instruction traced, one ContextEn change" python3 -c "
import json; t = json.load(open('$d/run/manifest.json'))['trace']
assert t['context_changes'] == 1 and t['insns'] == 1 and t['stopped_by'] == 'stop', t"
expect_rc "cr3=$P: efipt insn --run decodes without errors" 0 $EFIPT insn --run "$d/run"
awk '/^\[/ { print; next } { print $1 }' "$TMP/out" >"$d/insn.txt"
expect "cr3=$P: the MOV CR3 at $M, its PIP ($X), tracing disabled (TIP.PGD without IP)" python3 -c "
l = [x.split() for x in open('$TMP/out').read().splitlines()]
assert l[-3][0] == '%016x' % $M and l[-3][1:3] == ['mov', 'cr3,'], l
assert l[-2] == ['[paging,', 'cr3:', '%016x]' % $X] and l[-1] == ['[disabled]'], l"
libipt_agrees "cr3=$P" "$d"
