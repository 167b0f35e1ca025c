# efipt qemu with awkward inputs (docs/qemu.md "Bad input"): the ESP taken
# from the QEMU arguments only when there is exactly one raw FAT disk image
# (and saying why not otherwise), and a run directory on a file system that
# fills: a clear message, a manifest that says the trace is missing, never
# a part of a trace presented as a whole one.
. tests/lib.sh
. tests/qemu/lib_qemu.sh

PLUGIN=$(plugin_path)
CODE=/usr/share/OVMF/OVMF_CODE_4M.fd
if [ ! -f "$PLUGIN" ]; then
	ok "qemu bad input: SKIP, $PLUGIN not built (qemu-plugin.h unavailable: make qemu-plugin says why)"
	exit 0
fi
QARGS="-machine q35 -m 512 -smp 1 -accel tcg -cpu max -display none -nodefaults -no-reboot -net none"
cp /usr/share/OVMF/OVMF_VARS_4M.fd "$TMP/vars.fd"
FW="-drive if=pflash,format=raw,unit=0,readonly=on,file=$CODE -drive if=pflash,format=raw,unit=1,file=$TMP/vars.fd"

# one raw FAT image: the ESP, said so; no efipt.efi ran on it: nothing merged, not a failure
mkfs.fat -C "$TMP/fat.img" 4096 >/dev/null 2>&1 || truncate -s 4M "$TMP/fat.img"
# shellcheck disable=SC2086
expect_rc "esp: the one raw FAT -drive is taken as the ESP" 0 nice -n 10 timeout 120 \
	$EFIPT qemu -o "$TMP/r1" --limit 100000 -- $QARGS $FW -drive format=raw,file="$TMP/fat.img"
contains "esp: says which image it took and from where" "$TMP/out" \
	"the ESP is $TMP/fat.img (-drive file=): efipt.efi's run there is merged after QEMU ends (--no-esp: not)"
contains "esp: a disk without efipt.efi's run: nothing merged, says why" "$TMP/out" \
	"nothing merged from $TMP/fat.img: $TMP/fat.img: no \\efipt directory could be read from it"
# shellcheck disable=SC2086
expect_rc "esp: -hda too" 0 nice -n 10 timeout 120 \
	$EFIPT qemu -o "$TMP/r2" --limit 100000 -- $QARGS $FW -hda "$TMP/fat.img" 2>/dev/null
contains "esp: -hda named" "$TMP/out" "the ESP is $TMP/fat.img (-hda)"
# shellcheck disable=SC2086
expect_rc "esp: --no-esp looks for none" 0 nice -n 10 timeout 120 \
	$EFIPT qemu -o "$TMP/r3" --no-esp --limit 100000 -- $QARGS $FW -hda "$TMP/fat.img"
expect "esp: --no-esp says nothing of an ESP" sh -c "! grep -q ESP '$TMP/out'"

# no guessing: several disks, qcow2, not FAT
cp "$TMP/fat.img" "$TMP/fat2.img"
# shellcheck disable=SC2086
expect_rc "esp: two disk images: traced without an ESP" 0 nice -n 10 timeout 120 \
	$EFIPT qemu -o "$TMP/r4" --limit 100000 -- $QARGS $FW \
	-drive format=raw,file="$TMP/fat.img" -drive format=raw,file="$TMP/fat2.img"
contains "esp: two disk images: says to give --esp" "$TMP/out" \
	"no ESP to merge efipt.efi's run from: 2 disk images in the QEMU arguments ($TMP/fat.img, $TMP/fat2.img): give --esp IMAGE to say which is the ESP"
printf 'QFI\373\0\0\0\3' >"$TMP/disk.qcow2"
truncate -s 1M "$TMP/disk.qcow2"
# shellcheck disable=SC2086
$EFIPT qemu -o "$TMP/r5" --limit 100000 -- $QARGS $FW -drive format=qcow2,file="$TMP/disk.qcow2" \
	>"$TMP/out" 2>"$TMP/err"
contains "esp: format=qcow2 is not guessed at" "$TMP/out" \
	"no ESP to merge efipt.efi's run from: $TMP/disk.qcow2 is format=qcow2: efipt reads raw FAT images only"
# shellcheck disable=SC2086
$EFIPT qemu -o "$TMP/r6" --limit 100000 -- $QARGS $FW -hda "$TMP/disk.qcow2" >"$TMP/out" 2>"$TMP/err"
contains "esp: a qcow2 file without format= is not guessed at" "$TMP/out" \
	"$TMP/disk.qcow2 is a qcow2 image: efipt reads raw FAT images only"
truncate -s 2M "$TMP/zero.img"
# shellcheck disable=SC2086
expect_rc "esp: a raw disk without FAT: traced without an ESP" 0 nice -n 10 timeout 120 \
	$EFIPT qemu -o "$TMP/r7" --limit 100000 -- $QARGS $FW -drive format=raw,file="$TMP/zero.img"
contains "esp: says it holds no FAT" "$TMP/out" "$TMP/zero.img holds no FAT file system"
# shellcheck disable=SC2086
expect_rc "esp: --esp with --no-esp is refused" 2 $EFIPT qemu -o "$TMP/r8" --esp "$TMP/fat.img" \
	--no-esp -- $QARGS $FW

# a file system that fills: QEMU may write only 100 KiB per file (SIGXFSZ
# ignored, so the write fails with EFBIG, as ENOSPC would)
cat >"$TMP/small-qemu.sh" <<'EOS'
#!/bin/sh
trap '' XFSZ
ulimit -f 200
exec qemu-system-x86_64 "$@"
EOS
chmod +x "$TMP/small-qemu.sh"
# shellcheck disable=SC2086
expect_rc "full: efipt qemu fails when the trace cannot be written" 1 nice -n 10 timeout 120 \
	$EFIPT qemu --qemu "$TMP/small-qemu.sh" -o "$TMP/full" --limit 20000000 -- $QARGS $FW
contains "full: names the file and the cause" "$TMP/err" \
	"the trace could not be written: $TMP/full/trace.pt.tmp: File too large (CPU 0's trace: "
expect "full: no trace file, the manifest says failed and why (files status EFBIG)" python3 -c "
import json, os; m=json.load(open('$TMP/full/manifest.json'))
f = {e['name']: e for e in m['files']}
assert m['status']['result'] == 'failed' and 'File too large' in m['status']['message'], m['status']
assert f['trace.pt']['status'] == 'EFBIG' and f['trace.pt']['size'] == 0, f['trace.pt']
assert not os.path.exists('$TMP/full/trace.pt') and not os.path.exists('$TMP/full/trace.pt.tmp')"
expect_rc "full: efipt decode refuses it, saying why" 1 $EFIPT decode "$TMP/full"
contains "full: the decode names the failure" "$TMP/err" "the run could not write its trace: manifest.json says EFBIG for trace.pt"

# the same on a real full file system where a tmpfs can be mounted (root)
if mkdir -p "$TMP/tiny" && mount -t tmpfs -o size=256k tmpfs "$TMP/tiny" 2>/dev/null; then
	# shellcheck disable=SC2086
	expect_rc "full tmpfs: efipt qemu fails" 1 nice -n 10 timeout 120 \
		$EFIPT qemu -o "$TMP/tiny/run" --limit 20000000 -- $QARGS $FW
	contains "full tmpfs: names the cause" "$TMP/err" "No space left on device"
	expect "full tmpfs: no trace presented as complete" sh -c \
		"[ ! -e '$TMP/tiny/run/trace.pt' ] && ! ls '$TMP/tiny/run' 2>/dev/null | grep -q tmp"
	umount "$TMP/tiny"
else
	ok "full tmpfs: SKIP, no tmpfs can be mounted here (not root)"
fi

# QEMU never outlives efipt qemu: kill -TERM (CI cancel, systemd) is
# passed on, and QEMU ends when efipt qemu dies whatever kills it (-9)
# stopped SIG NAME: efipt qemu over OVMF, killed with SIG once QEMU runs;
# sets QPID (QEMU's pid) and RC
stopped() {
	$EFIPT qemu -o "$TMP/$2" -- $QARGS $FW >"$TMP/$2.out" 2>"$TMP/$2.err" &
	epid=$!
	QPID=""
	for i in $(seq 1 100); do
		QPID=$(pgrep -P "$epid" qemu-system 2>/dev/null | head -1)
		[ -n "$QPID" ] && break
		sleep 0.2
	done
	sleep 2 # OVMF running
	kill "-$1" "$epid"
	wait "$epid"
	RC=$?
	for i in $(seq 1 50); do
		kill -0 "$QPID" 2>/dev/null || break
		sleep 0.2
	done
}
gone() {
	if [ -n "$QPID" ] && ! kill -0 "$QPID" 2>/dev/null && ! pgrep -f "dir=$TMP/$2," >/dev/null; then
		ok "$1"
	else
		nok "$1" "QEMU (pid '$QPID') still runs: $(ps -o pid,ppid,args -p "$QPID" 2>/dev/null | tail -1)"
		[ -n "$QPID" ] && kill -9 "$QPID" 2>/dev/null
	fi
}
stopped TERM sigterm
gone "signals: kill -TERM of efipt qemu ends QEMU: no qemu-system process remains" sigterm
[ "$RC" -eq 143 ] && ok "signals: efipt qemu exits 128 + SIGTERM" || nok "signals: efipt qemu exits 143" "exit $RC"
contains "signals: says it passed the signal on" "$TMP/sigterm.err" "efipt qemu: Terminated: passed on to QEMU, which ended"
expect_rc "signals: the trace up to then decodes" 0 $EFIPT decode "$TMP/sigterm"
stopped INT sigint
gone "signals: SIGINT too" sigint
stopped HUP sighup
gone "signals: SIGHUP too" sighup
stopped KILL sigkill
gone "signals: kill -9 of efipt qemu: QEMU ends with it (PR_SET_PDEATHSIG)" sigkill

# --timeout: QEMU is stopped, the trace up to then kept, exit 1; a line
# says what QEMU waits for before the wait
# shellcheck disable=SC2086
expect_rc "timeout: --timeout 3 stops QEMU, exit 1" 1 nice -n 10 timeout 120 $EFIPT qemu -o "$TMP/tmo" --timeout 3 -- $QARGS $FW
contains "timeout: said" "$TMP/err" "efipt qemu: --timeout 3: QEMU was stopped"
contains "timeout: the trace is kept" "$TMP/err" "efipt qemu: $TMP/tmo holds the trace up to then"
contains "the wait is said: the reset vector" "$TMP/out" "efipt qemu: QEMU runs; tracing from the reset vector"
expect_rc "timeout: the trace up to then decodes" 0 $EFIPT decode "$TMP/tmo"
# shellcheck disable=SC2086
expect_rc "timeout: --start marker never reached" 1 nice -n 10 timeout 120 $EFIPT qemu -o "$TMP/tmm" --start marker --timeout 3 -- $QARGS $FW
contains "the wait is said: the start marker" "$TMP/out" "efipt qemu: QEMU runs; waiting for the start marker (EPT1) to start tracing"

# QEMU failing after it loaded the plugin: QEMU's reason and status, and
# the run directory refused by the decoding commands, not decoded as zeros
# shellcheck disable=SC2086
expect_rc "qemu fails: -bios given the code flash: exit 1" 1 nice -n 10 timeout 120 $EFIPT qemu -o "$TMP/bios" -- $QARGS -bios "$CODE"
contains "qemu fails: QEMU's own reason and status" "$TMP/err" "efipt qemu: QEMU failed (exit status 1) before the guest ran: qemu: could not load PC BIOS '$CODE'"
expect_rc "qemu fails: decode refuses the run" 1 $EFIPT decode "$TMP/bios"
contains "qemu fails: decode says why" "$TMP/err" "trace.pt is empty: nothing was traced (the run failed: tracing never started"
expect_rc "qemu fails: coverage refuses it too" 1 $EFIPT coverage "$TMP/bios" --format json
