# efipt.efi's IP filter with timing packets under efipt-qemu.so
# start=guest (docs/qemu.md "PT that follows the guest"): one boot with a
# combination `efipt plan` accepts for Tiger Lake (2 address ranges,
# configurable PSB and CYC): --filter image=app (ADDR0 = the traced app's
# range, ADDR0_CFG=1), --tsc, --mtc=6, --cyc=2, --psb=4, ToPA, stop mode.
# The plugin must take every WRMSR (no #GP, no operational error) and honour
# the range: the trace decodes with zero errors to exactly the instructions
# the logger (tests/qemu/insnlog.c from=traceen) recorded inside
# [ADDR0_A, ADDR0_B] while TraceEn was set, and none outside it. One boot
# of OVMF under TCG, about a minute and a half.
. tests/lib.sh
. tests/qemu/lib_qemu.sh
. tests/qemu/lib_guest.sh

need_guest_api "start=guest, filter"
PROFILE=$PWD/tests/data/cpu-profiles/tiger-lake-up3-core-i7-1165g7.txt
ARGS='--filter image=app --tsc --mtc=6 --cyc=2 --psb=4 --output topa --mode stop'
# plan accepts the combination for this profile (what efipt.efi will do)
# (text format: a refusal is exit status 1)
# shellcheck disable=SC2046
expect "filter: efipt plan accepts the combination for Tiger Lake" $EFIPT plan --cpuid "$PROFILE" \
	--size 4M $(echo "$ARGS" | sed 's/image=app/0x100000-0x1fffff/')
d=$TMP/filter
mkdir -p "$d"
cp "$PROFILE" "$d/prof.txt"
sh ovmf/mkesp.sh --image "$d/esp.img" --add 'build/tests/traced_app.efi:\EFI\tools\app.efi' \
	--add "$d/prof.txt:\\prof.txt" \
	--args "trace --emulated-caps \\prof.txt $ARGS --debugcon --shutdown -- \\EFI\\tools\\app.efi" >/dev/null
guest_boot "$d" "$PROFILE" -plugin "$LOGGER,out=$d/log.bin,from=traceen"
rc=$?
[ "$rc" -eq 0 ] && ok "filter: efipt.efi ran to its shutdown" ||
	nok "filter: efipt.efi ran to its shutdown" "exit $rc: $(tail -c 400 "$d/qemu.log"); $(tail -c 300 "$d/debugcon.log")"
contains "filter: efipt.efi filtered the app's range" "$d/debugcon.log" "efipt: filter 0: image app = "
expect "filter: every WRMSR taken: the range, IA32_RTIT_CTL with ADDR0_CFG=1, MTCFreq 6, CycThresh 2, PSBFreq 4" python3 -c "
import json; w=[json.loads(l) for l in open('$d/run/rtit.jsonl')]
assert w and all(x['result']=='ok' for x in w), [x for x in w if x['result']!='ok']
m={x['msr']: int(x['value'],16) for x in w if x['msr']!='IA32_RTIT_CTL'}
assert 0 < m['IA32_RTIT_ADDR0_A'] < m['IA32_RTIT_ADDR0_B'], m
c=[int(x['value'],16) for x in w if x['msr']=='IA32_RTIT_CTL'][0]
assert c&1 and (c>>32)&15==1 and c&(1<<10) and c&(1<<9) and (c>>14)&15==6 and c&2, hex(c)
assert (c>>19)&15==2 and (c>>24)&15==4 and c&(1<<8), hex(c)"
expect_rc "filter: efipt insn --run decodes without errors" 0 $EFIPT insn --run "$d/run" --no-inst
mv "$TMP/out" "$d/insn.txt"
# cmp.py LOG INSN: the logged instructions in [ADDR0_A, ADDR0_B] (runs of
# one address once) are the decoded ones
cat >"$d/cmp.py" <<'PY'
import json, struct, sys
w = [json.loads(l) for l in open(sys.argv[1] + '/run/rtit.jsonl')]
a = [int(x['value'], 16) for x in w if x['msr'] == 'IA32_RTIT_ADDR0_A'][-1]
b = [int(x['value'], 16) for x in w if x['msr'] == 'IA32_RTIT_ADDR0_B'][-1]
raw = open(sys.argv[1] + '/log.bin', 'rb').read()
log = struct.unpack('<%dQ' % (len(raw) // 8), raw[:len(raw) // 8 * 8])
want = []
for x in log:
    if a <= x <= b and (not want or want[-1] != x):
        want.append(x)
got = []
for l in open(sys.argv[2]):
    if not l.startswith('['):
        x = int(l, 16)
        if not got or got[-1] != x:
            got.append(x)
out = [x for x in got if not a <= x <= b]
if out:
    sys.exit('%d decoded instructions outside the range, the first at 0x%x' % (len(out), out[0]))
if got != want:
    k = next((i for i, (p, q) in enumerate(zip(got, want)) if p != q), min(len(got), len(want)))
    sys.exit('decoded %d, logged in range %d: they differ at %d' % (len(got), len(want), k))
print('%d instructions in [0x%x, 0x%x] of %d logged' % (len(got), a, b, len(log)))
PY
if python3 "$d/cmp.py" "$d" "$d/insn.txt" >"$d/cmp.txt" 2>&1; then
	ok "filter: decoded = executed inside the range while TraceEn was set ($(cat "$d/cmp.txt"))"
else
	nok "filter: decoded = executed inside the range" "$(head -c 400 "$d/cmp.txt")"
fi
sed '50d' "$d/insn.txt" >"$d/insn.drop"
expect "filter: the comparison finds a missing instruction" sh -c "! python3 '$d/cmp.py' '$d' '$d/insn.drop'"
$EFIPT packets "$d/run/trace.pt" >"$d/packets.txt" 2>&1
# The app's range is entered (TIP.PGE) and left (TIP.PGD) at its start and
# return, at each branch out to firmware code (Debian 13's build of the app
# has ten, seen as TIP.PGD without FUP; Debian 12's none) and at each timer
# interrupt that strikes while it runs (FUP, TIP.PGD). How many of each
# there are depends on the build and on the host's speed, so only the
# pairing is asserted.
expect "filter: the stream carries TSC, MTC, CYC and paired TIP.PGE/TIP.PGD at the range's edges" python3 -c "
k=[l.split()[1] for l in open('$d/packets.txt') if len(l.split())>1 and l[:1] in '0123456789abcdef']
assert all(x in k for x in ('tsc','mtc','cyc')), set(k)
e=[x for x in k if x in ('tip.pge','tip.pgd')]
assert e and e == ['tip.pge','tip.pgd'] * (len(e) // 2), e"
