# Helpers for the flight recorder tests (sourced after lib.sh and
# lib_qemu.sh). TOOL is tests/qemu/rectool.c built; RING, INSNS the options
# efipt.efi synthesized with (trace --recorder --source synthetic --size
# RING --insns INSNS); POS the write position it printed.

TOOL=${EFIPT_BUILD:-build}/tests/rectool.efi
[ -f "$TOOL" ] || TOOL=build/tests/rectool.efi
if [ ! -f "$TOOL" ]; then
	nok "recorder: rectool.efi" "$TOOL is not built (make $TOOL)"
	exit 0
fi

# recovered_dirs NAME: NAME's run directories written by recover, in order
recovered_dirs() {
	for r in $(rundirs "$1"); do
		grep -q '"command": "recover"' "$r/manifest.json" 2>/dev/null && echo "$r"
	done
}

# check_truth RUNDIR LABEL: RUNDIR/trace.pt is the synthetic truth: efipt
# synth over the recovered snapshot of the traced image, laid into the ring
# (tests/qemu/recorder_check.py), and decodes without error
check_truth() {
	tr_run=$1 tr_label=$2
	set -- $(python3 -c "
import json; m = json.load(open('$tr_run/manifest.json'))['traced_image']
base = int(m['base'], 16)
e = [i for i in json.load(open('$tr_run/images.json'))['images'] if int(i['base'], 16) == base][0]
print('%s/mem-%016x.bin:0-%d:0x%x %s' % ('$tr_run', base, m['size'], base, e['entry']))")
	if ! $EFIPT synth --out "$tr_run.stream" --raw "$1" --start "$2" --seed 1 --insns "$INSNS" \
		--size $((4 * RING)) --interrupts 2 --tsc --psb-period 4096 2>"$tr_run.synth"; then
		nok "$tr_label: the synthetic truth on the host" "$(cat "$tr_run.synth")"
		return
	fi
	if python3 tests/qemu/recorder_check.py "$tr_run.stream" "$tr_run" "$RING" "$POS" \
		>"$tr_run.cmp" 2>&1; then
		ok "$tr_label: trace.pt is the synthetic truth ($(cat "$tr_run.cmp"))"
	else
		nok "$tr_label: trace.pt is the synthetic truth" "$(cat "$tr_run.cmp")"
	fi
	expect_rc "$tr_label: efipt decode reads the recovered run" 0 $EFIPT decode "$tr_run"
	contains "$tr_label: no decode errors" "$TMP/out" "Errors        0"
}

# qmp_reset SOCKET: QMP system_reset (after qmp_capabilities)
qmp_reset() {
	python3 - "$1" <<'EOF'
import json, socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
f = s.makefile("rw")
f.readline()  # greeting
for cmd in ("qmp_capabilities", "system_reset"):
    f.write(json.dumps({"execute": cmd}) + "\n")
    f.flush()
    while True:
        r = json.loads(f.readline())
        if "return" in r or "error" in r:
            break
    assert "return" in r, r
print("system_reset sent")
EOF
}
