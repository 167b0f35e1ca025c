# Helpers for QEMU+OVMF tests (sourced after tests/lib.sh).
# boot NAME "ARGS" [QEMU_CPU]: build an ESP whose efipt.args holds ARGS, boot
# it, leave results in $TMP/NAME/ (debugcon.log, efipt/<run-id>/, ...).
# boot_esp NAME [QEMU_CPU]: the same for an ESP already in $TMP/NAME/esp.img.
# The boot itself is a check: it must end by itself before the timeout.
# QEMU_EXTRA (exported) adds QEMU options.
BOOT_TIMEOUT=${BOOT_TIMEOUT:-90}
# The OVMF the plugin's tests boot: the system's, or another build's code and
# variable store (EFIPT_TEST_OVMF_CODE, EFIPT_TEST_OVMF_VARS; docs/platforms.md).
OVMF_TEST_CODE=${EFIPT_TEST_OVMF_CODE:-/usr/share/OVMF/OVMF_CODE_4M.fd}
OVMF_TEST_VARS=${EFIPT_TEST_OVMF_VARS:-/usr/share/OVMF/OVMF_VARS_4M.fd}
boot() {
	mkdir -p "$TMP/$1"
	sh ovmf/mkesp.sh --image "$TMP/$1/esp.img" --args "$2" >/dev/null
	boot_esp "$1" "${3:-max}"
}
boot_esp() {
	name=$1 cpu=${2:-max}
	QEMU_CPU=$cpu sh ovmf/boot.sh "$TMP/$name/esp.img" "$TMP/$name" "$BOOT_TIMEOUT"
	rc=$?
	if [ "$rc" -eq 0 ]; then
		ok "$name: boots, runs and powers off"
	else
		nok "$name: boots, runs and powers off" "QEMU exit $rc (124 = timeout); log: $(tail -c 600 "$TMP/$name/debugcon.log" 2>/dev/null)"
	fi
}
# rundirs NAME: the run directories copied out of NAME's ESP
rundirs() { ls -d "$TMP/$1"/efipt/*/ 2>/dev/null; }
# The plugins to test: the system QEMU's, or those tests/run.sh names for
# a second QEMU (its qemu-system-x86_64 then comes first in PATH).
plugin_path() { echo "${EFIPT_QEMU_PLUGIN:-build/efipt-qemu.so}"; }
logger_path() { echo "${EFIPT_INSNLOG:-build/tests/insnlog.so}"; }
# plugin_output NAME: PLUGIN (efipt-qemu.so), LOGGER (insnlog.so), IPT
# (libipt's reader) and CODE (OVMF's code flash) for the plugin's tests;
# when the plugins are not built, "ok NAME: SKIP" and the script ends.
plugin_output() {
	PLUGIN=$(plugin_path)
	LOGGER=$(logger_path)
	IPT=build/tests/ipt_insns
	CODE=$OVMF_TEST_CODE
	if [ ! -f "$PLUGIN" ] || [ ! -f "$LOGGER" ]; then
		# qemu-plugin.h comes from Debian's qemu source package (network)
		ok "$1: SKIP, $PLUGIN not built (qemu-plugin.h unavailable: make qemu-plugin says why)"
		exit 0
	fi
}
# machine_args [SMP]: the QEMU machine the plugin's tests boot: q35, 512M,
# SMP vCPUs (default 1), TCG, -cpu max; no display, default devices,
# reboot (the guest's reset ends QEMU) or network.
machine_args() {
	echo "-machine q35 -m 512 -smp ${1:-1} -accel tcg -cpu max -display none -nodefaults -no-reboot -net none"
}
# ovmf_args DIR [SMP]: machine_args and OVMF (CODE, plugin_output's) in
# flash, its variable store a fresh copy in DIR/vars.fd. For an unquoted
# $(...): the paths hold no spaces.
ovmf_args() {
	mkdir -p "$1"
	cp "$OVMF_TEST_VARS" "$1/vars.fd"
	echo "$(machine_args "${2:-1}") -drive if=pflash,format=raw,unit=0,readonly=on,file=$CODE" \
		"-drive if=pflash,format=raw,unit=1,file=$1/vars.fd"
}
# qemu_run DIR SECONDS QEMU...: qemu-system-x86_64 QEMU... under nice and
# a timeout of SECONDS, no input, its output in DIR/qemu.log; its status.
qemu_run() {
	qd=$1 qs=$2
	shift 2
	nice -n 10 timeout --kill-after=5 "$qs" qemu-system-x86_64 "$@" </dev/null >"$qd/qemu.log" 2>&1
}
# dxe_after DIR: DXE, an execution count in DXE for the plugins' after=.
# Where DXE begins is the firmware's (Debian 12's OVMF: past 750M
# instructions, as PEI decompresses DXE; Debian 13's: past 500M, and soon
# after it waits, nearly idle, in real time): a first run of the logger
# alone (LOGGER: plugin_output's), with QEMU's log of interrupts (-d int) in
# DIR, is ended at the firmware's first hardware interrupt (its DXE timer),
# and DXE is 20M callbacks after where it was (QEMU was ended a little
# later; without -icount the count there differs a little from run to run).
# REP iterations make the log longer. Status 1 when no interrupt came in
# 120 s (DIR/qemu.log says why).
dxe_after() {
	mkdir -p "$1"
	# shellcheck disable=SC2046
	nice -n 10 timeout --kill-after=5 120 qemu-system-x86_64 $(ovmf_args "$1") -d int -D "$1/int.log" \
		-plugin "$LOGGER,out=/dev/null,count=$1/count.txt" </dev/null >"$1/qemu.log" 2>&1 &
	dp=$! # timeout's: it passes SIGTERM on to QEMU
	di=0
	while ! grep -q '^Servicing hardware INT' "$1/int.log" 2>/dev/null && [ $di -lt 1200 ] &&
		kill -0 $dp 2>/dev/null; do
		sleep 0.1
		di=$((di + 1))
	done
	kill -TERM $dp 2>/dev/null
	wait $dp
	DXE=
	grep -q '^Servicing hardware INT' "$1/int.log" 2>/dev/null && [ -s "$1/count.txt" ] || return 1
	DXE=$(($(cut -d' ' -f2 "$1/count.txt") + 20000000))
}
# need_dxe NAME DIR: dxe_after DIR, or "not ok NAME: ..." and the script
# ends.
need_dxe() {
	dxe_after "$2" && return 0
	nok "$1: the firmware's first interrupt found by a first run" "$(tail -c 300 "$2/qemu.log")"
	exit 0
}
# need_api4 NAME WHY: under a QEMU older than 9.2 (no plugin API 4, which
# start=guest and the interrupt vectors need), "ok NAME: SKIP, ... (WHY)"
# and the script ends.
need_api4() {
	api=$(qemu-system-x86_64 --version | sed -n 's/^QEMU emulator version \([0-9]*\)\.\([0-9]*\).*/\1 \2/p')
	# shellcheck disable=SC2086
	set -- "$1" "$2" $api
	if [ "${3:-0}" -lt 9 ] || { [ "$3" -eq 9 ] && [ "${4:-0}" -lt 2 ]; }; then
		ok "$1: SKIP, QEMU $3.$4 has no plugin API 4 ($2)"
		exit 0
	fi
}
# marker_app_trace NAME DIR APP: the UEFI app APP (with the trace markers
# around its work) booted from an ESP under efipt qemu --start marker
# --stop marker (ovmf_args, and TRACE_EXTRA: more QEMU options), the logger
# recording from the start marker on: DIR/run, DIR/log.bin, DIR/debugcon.log
# (port 0x402). TRACE_TIMEOUT: seconds QEMU may take (120; more for -icount,
# which makes QEMU slower).
marker_app_trace() {
	mkdir -p "$2"
	EFIPT_EFI=$3 sh ovmf/mkesp.sh --image "$2/esp.img" >/dev/null
	# shellcheck disable=SC2046,SC2086
	expect_rc "$1: efipt qemu traces the app's region and ends QEMU at the stop marker" 0 \
		nice -n 10 timeout "${TRACE_TIMEOUT:-120}" $EFIPT qemu -o "$2/run" --no-esp --start marker --stop marker \
		-- $(ovmf_args "$2") ${TRACE_EXTRA:-} \
		-drive format=raw,file="$2/esp.img" -device isa-debug-exit,iobase=0xf4,iosize=0x04 \
		-debugcon file:"$2/debugcon.log" -global isa-debugcon.iobase=0x402 \
		-plugin "$LOGGER,out=$2/log.bin,from=marker"
}
# decoded_equals_log NAME DIR WHAT [--events]: efipt insn --run DIR/run
# must decode without errors (DIR/insn.txt) exactly the instructions of
# DIR/log.bin (insnlog.so's record, starting where the trace does), to its
# end; --events: but for the INT3s and UD2s that raised events (insnlog_cmp.py).
decoded_equals_log() {
	expect_rc "$1: efipt insn --run decodes without errors" 0 $EFIPT insn --run "$2/run" --no-inst
	mv "$TMP/out" "$2/insn.txt"
	fc=$(python3 -c "import json; print(json.load(open('$2/run/manifest.json'))['trace']['first_call'])")
	if python3 tests/qemu/insnlog_cmp.py "$2/log.bin" "$2/insn.txt" "$2/run/manifest.json" "$fc" \
		--whole ${4:-} >"$2/cmp.txt" 2>&1; then
		ok "$1: decoded = executed, $3 ($(cat "$2/cmp.txt"))"
	else
		nok "$1: decoded = executed, $3" "$(head -c 400 "$2/cmp.txt")"
	fi
}
# edk2_ovmf NAME: EOVMF and EVARS (OVMF with EfiptPkg, make ovmf-efipt:
# build/edk2/ovmf), EBUILD its build tree (--symbols); when Debian's edk2
# source could not be had, "ok NAME: SKIP" and the script ends; a build
# that is missing otherwise is a failure.
edk2_ovmf() {
	EOVMF=build/edk2/ovmf/OVMF_CODE.fd
	EVARS=build/edk2/ovmf/OVMF_VARS.fd
	EBUILD=build/edk2/ovmf/Build/OvmfX64/DEBUG_GCC5
	if [ -f build/edk2/UNAVAILABLE ] && [ ! -f "$EOVMF" ]; then
		ok "$1: SKIP, OVMF with EfiptPkg not built ($(cat build/edk2/UNAVAILABLE))"
		exit 0
	fi
	if [ ! -f "$EOVMF" ] || [ ! -f "$EVARS" ]; then
		nok "$1" "$EOVMF missing (make ovmf-efipt)"
		exit 0
	fi
}
# fwboot NAME "ARGS" [VARS] [QEMU_CPU]: boot OVMF with EfiptPkg (EOVMF) from
# an ESP whose efipt.args holds ARGS, its variable store copied from VARS
# (default EVARS: a fresh one); the firmware's debug port (0x402) in
# $TMP/NAME/fw.log, the rest as boot leaves it in $TMP/NAME/.
# fwboot_esp NAME [VARS] [QEMU_CPU]: the same for $TMP/NAME/esp.img as it is.
fwboot() {
	mkdir -p "$TMP/$1"
	sh ovmf/mkesp.sh --image "$TMP/$1/esp.img" --args "$2" >/dev/null
	n=$1
	shift 2
	fwboot_esp "$n" "$@"
}
fwboot_esp() {
	OVMF_CODE=$EOVMF OVMF_VARS=${2:-$EVARS} QEMU_EXTRA="${QEMU_EXTRA:-} -device \
isa-debugcon,iobase=0x402,chardev=fw -chardev file,id=fw,path=$TMP/$1/fw.log" \
		boot_esp "$1" "${3:-max}"
}
# guest_boot DIR PROFILE [QEMU...]: OVMF (CODE) from DIR/esp.img under
# efipt-qemu.so start=guest,cpuid=PROFILE (run directory DIR/run), the
# debug console (port 0xE9) in DIR/debugcon.log, isa-debug-exit at 0xF4,
# QEMU's output in DIR/qemu.log; QEMU's exit status.
guest_boot() {
	gd=$1 gp=$2
	shift 2
	cp "$OVMF_TEST_VARS" "$gd/vars.fd"
	# shellcheck disable=SC2086
	nice -n 10 timeout --kill-after=5 600 qemu-system-x86_64 -machine q35 -m 512 -smp 1 \
		-accel tcg -cpu max -display none -nodefaults -no-reboot -net none \
		-drive if=pflash,format=raw,unit=0,readonly=on,file="$CODE" \
		-drive if=pflash,format=raw,unit=1,file="$gd/vars.fd" \
		-drive format=raw,file="$gd/esp.img" -device isa-debug-exit,iobase=0xf4,iosize=0x04 \
		-debugcon file:"$gd/debugcon.log" -global isa-debugcon.iobase=0xe9 \
		-plugin "$PLUGIN,dir=$gd/run,start=guest,cpuid=$gp" "$@" \
		</dev/null >"$gd/qemu.log" 2>&1
}
# cpu_equals_log NAME DIR CPU [WHAT]: DIR/insnCPU.txt (decoded) is, from its
# first instruction to its last, what the logger (cpus=all) recorded for
# that vCPU in DIR/log.bin.cpuCPU
cpu_equals_log() {
	if python3 tests/qemu/insnlog_cmp.py "$2/log.bin.cpu$3" "$2/insn$3.txt" "$2/run/manifest.json" 0 \
		--cpu "$3" >"$2/cmp$3.txt" 2>&1; then
		ok "$1: CPU $3 decoded = executed${4:+ $4} ($(cat "$2/cmp$3.txt"))"
	else
		nok "$1: CPU $3 decoded = executed" "$(head -c 400 "$2/cmp$3.txt")"
	fi
}
# count_equals_log NAME DIR MIN [WHAT] [PYTHON]: the instructions efipt
# decode counted (DIR/decode.txt) are the trace's (DIR/run) and those the
# logger counted (DIR/count.txt: count=), more than MIN of them. QEMU ends
# inside the logger's callback (limit=): a last branch, whose target is
# unknown, is left out of the trace (its end_ip is then that branch). Which
# plugin's work on the limit's instruction X comes first QEMU leaves open
# (Debian 13's QEMU 10.0.13 runs efipt-qemu.so's count of X first, 7.2 and
# backports' 10.0.2 the logger's exit): where efipt-qemu.so saw X start, the
# trace holds X and ends after it (end_ip in X's 1..15 bytes). PYTHON: more
# asserts on t, the manifest's trace.
count_equals_log() {
	expect "$1: ${4:+$4, }decoded = executed instruction count (logger: $(cat "$2/count.txt" 2>/dev/null))" python3 -c "
import json, re
t = json.load(open('$2/run/manifest.json'))['trace']
dec = int(re.search(r'^Instructions +(\d+)', open('$2/decode.txt').read(), re.M).group(1))
w = open('$2/count.txt').read().split()
ran, last = int(w[3]), int(w[5], 16)
nxt = int(w[7], 16) if len(w) > 7 else 0
end = int(t['end_ip'], 16)
extra = -1 if end == last else 1 if nxt and 0 < end - nxt <= 15 else 0
${5:-}
assert dec == t['insns'] == ran + extra and ran > $3, (dec, t['insns'], ran, extra, hex(end), hex(nxt))"
}
# wrmsrs_per_cpu NAME DIR N: in DIR/run/rtit.jsonl each of the N vCPUs'
# RTIT WRMSRs was accepted, set TraceEn once and cleared it, and gave an
# output base of its own
wrmsrs_per_cpu() {
	expect "$1" python3 -c "
import json; w=[json.loads(l) for l in open('$2/run/rtit.jsonl')]
assert all(x['result']=='ok' for x in w), [x for x in w if x['result']!='ok']
bases=set()
for c in range($3):
    mine=[x for x in w if x['cpu']==c]
    ctl=[int(x['value'],16) for x in mine if x['msr']=='IA32_RTIT_CTL']
    assert len(ctl)==2 and ctl[0]&1 and not ctl[1]&1, (c, ctl)
    bases.add([x['value'] for x in mine if x['msr']=='IA32_RTIT_OUTPUT_BASE'][0])
assert len(bases)==$3, bases"
}
# profile_esp DIR ARGS [MKESP...]: DIR/esp.img (ovmf/mkesp.sh MKESP...)
# holding PROFILE as \prof.txt, efipt.efi's arguments ARGS
profile_esp() {
	pd=$1 pa=$2
	shift 2
	mkdir -p "$pd"
	cp "$PROFILE" "$pd/prof.txt"
	sh ovmf/mkesp.sh --image "$pd/esp.img" "$@" --add "$pd/prof.txt:\\prof.txt" --args "$pa" >/dev/null
}
# guest_esp NAME DIR SECONDS [OPTIONS...]: efipt qemu OPTIONS --start guest
# --cpuid PROFILE under PLUGIN from DIR/esp.img (ovmf/qemu_esp.sh, with the
# QEMU_EXTRA, OVMF_CODE and OVMF_VARS the caller gives it), its output in
# DIR/out and DIR/qemu.log; "ok NAME" when it ends by itself in SECONDS.
guest_esp() {
	gn=$1 gd=$2 gs=$3
	shift 3
	EFIPT_QEMU_PLUGIN=$PLUGIN nice -n 10 sh ovmf/qemu_esp.sh "$EFIPT" "$gd/esp.img" "$gd" "$gs" "$@" \
		--start guest --cpuid "$PROFILE" >"$gd/out" 2>"$gd/qemu.log"
	rc=$?
	if [ "$rc" -eq 0 ]; then
		ok "$gn"
	else
		nok "$gn" "exit $rc: $(head -c 400 "$gd/qemu.log"); $(tail -c 300 "$gd/debugcon.log")"
	fi
}
# part_equals_log NAME DIR prefix|suffix WHAT: DIR/insn.txt (decoded) is the
# first (prefix) or last (suffix) of the instructions DIR/log.bin recorded
# from the trace's start (a logger with from=traceen), of those DIR/run's
# manifest counts (tests/qemu/insnlog_part.py)
part_equals_log() {
	fc=$(python3 -c "import json; print(json.load(open('$2/run/manifest.json'))['trace']['first_call'])")
	if python3 tests/qemu/insnlog_part.py "$2/log.bin" "$2/insn.txt" "$2/run/manifest.json" "$3" \
		"$fc" >"$2/cmp.txt" 2>&1; then
		ok "$1: $4 ($(cat "$2/cmp.txt"))"
	else
		nok "$1: $4" "$(head -c 400 "$2/cmp.txt")"
	fi
}
# libipt_agrees NAME DIR: libipt (IPT: ipt_insns) over DIR/run's trace and
# code snapshots decodes what efipt did (DIR/insn.txt, efipt insn --no-inst)
libipt_agrees() {
	ln=$1 ld=$2
	set --
	for f in $(python3 -c "import json
for r in json.load(open('$ld/run/memmap.json'))['regions']: print('%s:%s' % (r['snapshot'], r['phys']))"); do
		set -- "$@" "$ld/run/$f"
	done
	if "$IPT" "$ld/run/trace.pt" "$@" >"$ld/ipt.txt" 2>"$ld/ipt.err" &&
		grep -v '^\[' "$ld/insn.txt" | cmp -s - "$ld/ipt.txt"; then
		ok "$ln: libipt decodes the same instructions"
	else
		nok "$ln: libipt decodes the same instructions" \
			"$(head -c 300 "$ld/ipt.err"); $(wc -l <"$ld/ipt.txt") vs $(grep -vc '^\[' "$ld/insn.txt") lines"
	fi
}
