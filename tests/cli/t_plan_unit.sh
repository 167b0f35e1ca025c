# Every trace option combination efipt plan accepts for a CPU profile gives
# a WRMSR sequence (with its ToPA tables) that efipt-qemu.so start=guest
# takes without a rule violation: each sequence is replayed through
# core/pt_unit.c with the capabilities the plugin emulates for that
# profile (build/tests/ptunit_replay). This runs on the host, not under
# QEMU: it is the plugin's rule code, not the plugin. A combination plan
# refuses is counted, not replayed; a break in the rules must show here
# (the check that a bad sequence is refused is at the end).
. tests/lib.sh

R=${EFIPT_BUILD:-build}/tests/ptunit_replay
[ -x "$R" ] || { nok "plan/unit: $R" "not built (make $R)"; exit 0; }
D=tests/data/cpu-profiles

# combos PROFILE: every combination of the options below, one per line
combos() {
	for out in topa single; do
	for mode in stop wrap; do
	for size in 4K 2M; do
	for tm in "" "--tsc --mtc=3 --cyc" "--mtc=0 --cyc=1"; do
	for psb in "" "--psb=2"; do
	for ret in "" "--noretcomp"; do
	for flt in "" "--filter 0x1000-0x1fff --filter 0x3000-0x3fff" "--stop 0x5000 --kernel" \
		"--cr3 0x1000"; do
		echo "--output $out --mode $mode --size $size $tm $psb $ret $flt"
	done; done; done; done; done; done; done
}

for prof in tiger-lake-up3-core-i7-1165g7 skylake-s-core-i7-6700k broadwell-u-core-i7-5500u \
	apollo-lake-celeron-n3450 sapphire-rapids-xeon-w9-3475x; do
	p=$D/$prof.txt
	acc=0 ref=0 bad=""
	while read -r args; do
		# shellcheck disable=SC2086
		if ! $EFIPT plan --cpuid "$p" --format jsonl $args >"$TMP/plan" 2>/dev/null; then
			ref=$((ref + 1))
			continue
		fi
		acc=$((acc + 1))
		if ! $R "$p" <"$TMP/plan" >"$TMP/r" 2>&1; then
			bad="$args: $(cat "$TMP/r")"
			break
		fi
	done <<EOF
$(combos)
EOF
	if [ -z "$bad" ] && [ "$acc" -gt 0 ]; then
		ok "plan/unit: $prof: all $acc combinations plan accepts are taken by the PT unit ($ref refused by plan)"
	else
		nok "plan/unit: $prof" "${bad:-plan accepted none of the combinations}"
	fi
done

# the replay refuses what hardware would: OUTPUT_BASE with bit 6, and
# ADDR1 ranges on Broadwell (none)
p=$D/tiger-lake-up3-core-i7-1165g7.txt
expect "plan/unit: an unaligned OUTPUT_BASE in a sequence is refused with its rule" sh -c \
	"printf '{\"op\":\"wrmsr\",\"msr\":\"0x560\",\"value\":\"0x10000040\"}\n' | $R $p | grep -q 'reserved bits (6:0'"
expect "plan/unit: an address range on Broadwell is refused" sh -c \
	"printf '{\"op\":\"wrmsr\",\"msr\":\"0x582\",\"value\":\"0x1000\"}\n' | $R $D/broadwell-u-core-i7-5500u.txt | grep -q 'address range not enumerated'"
