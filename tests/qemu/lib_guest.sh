# Helpers for the start=guest tests (sourced after tests/qemu/lib_qemu.sh).
# need_guest_api NAME: plugin_output NAME, and the script ends with a SKIP
# ("ok NAME: SKIP") where QEMU has no plugin API 4 (QEMU 9.2 on: the
# WRMSR's registers; t_qemu_guest.sh checks the refusal there).
need_guest_api() {
	plugin_output "$1"
	need_api4 "$1" "start=guest; t_qemu_guest checks the refusal"
}
# cpu_decodes_as_logged NAME DIR CPU: CPU's trace in DIR/run decodes with zero
# errors (DIR/insnCPU.txt) to exactly what the logger (from=traceen,
# cpus=all: DIR/log.bin, DIR/log.bin.cpuN) recorded for it while its
# TraceEn was set
cpu_decodes_as_logged() {
	cn=$1 cd=$2 cc=$3
	expect_rc "$cn: CPU $cc decodes with zero errors" 0 $EFIPT insn --run "$cd/run" --cpu "$cc" --no-inst
	mv "$TMP/out" "$cd/insn$cc.txt"
	if [ "$cc" -eq 0 ]; then
		cfc=$(python3 -c "import json; print(json.load(open('$cd/run/manifest.json'))['trace']['first_call'])")
		set -- "$cd/log.bin" "$cd/insn0.txt" "$cd/run/manifest.json" "$cfc" --whole
	else
		set -- "$cd/log.bin.cpu$cc" "$cd/insn$cc.txt" "$cd/run/manifest.json" 0 --cpu "$cc"
	fi
	if python3 tests/qemu/insnlog_cmp.py "$@" >"$cd/cmp$cc.txt" 2>&1; then
		ok "$cn: CPU $cc decoded = executed while its TraceEn was set ($(cat "$cd/cmp$cc.txt"))"
	else
		nok "$cn: CPU $cc decoded = executed while its TraceEn was set" "$(head -c 400 "$cd/cmp$cc.txt")"
	fi
}
