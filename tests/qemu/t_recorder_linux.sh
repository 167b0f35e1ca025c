# The flight recorder through a real OS boot, read from Linux: efipt.efi
# arms a recorder (SYNTHETIC source: no PT under QEMU) and starts Debian's
# kernel (its EFI stub; tests/qemu/get-kernel.sh) with a small initramfs
# (busybox-static, efipt and its libraries; tests/qemu/reader_init.sh). The
# kernel calls ExitBootServices (the recorder takes the images again) and
# boots; the initramfs runs efipt recover --linux (efivarfs, /dev/mem) and
# hands the run directory out on a second disk. Its trace must be exactly
# what efipt.efi armed (the synthetic truth), taken at ExitBootServices too.
# The kernel's /proc/kallsyms (nokaslr) is kept for make test-kernel.
. tests/lib.sh
. tests/qemu/lib_qemu.sh
. tests/qemu/lib_recorder.sh

KDIR=build/kernel
if [ ! -f "$KDIR/version" ]; then
	ok "linux reader: SKIP, no Debian kernel in $KDIR (sh tests/qemu/get-kernel.sh $KDIR needs apt)"
	exit 0
fi
VER=$(cat "$KDIR/version")
K=$KDIR/$VER
PLAIN=build/efipt # the guest runs the plain build (no sanitizer runtime there)
d=$TMP/linux
mkdir -p "$d"

# the initramfs: /init, busybox, efipt with its shared libraries, the modules
set -- tests/qemu/reader_init.sh:/init "$KDIR/busybox:/bin/busybox" "$PLAIN:/efipt"
for m in "$K"/modules/*.ko; do
	set -- "$@" "$m:/modules/$(basename "$m")"
done
for l in $(ldd "$PLAIN" | awk '/=> \// {print $3} /^\t\/.*ld-linux/ {print $1}'); do
	set -- "$@" "$l:$l"
done
if ! python3 tests/qemu/mkinitramfs.py "$d/initrd.img" "$@" 2>"$d/mk.err"; then
	nok "linux reader: initramfs" "$(cat "$d/mk.err")"
	exit 0
fi
RING=16384
INSNS=100000
sh ovmf/mkesp.sh --image "$d/esp.img" --size 64 --add "$K/vmlinuz:vmlinuz" \
	--add "$d/initrd.img:initrd.img" --args \
	"trace --recorder --source synthetic --size 16K --insns $INSNS --no-snapshot --debugcon -- \\vmlinuz initrd=\\initrd.img console=ttyS0 nokaslr panic=-1" \
	>/dev/null
truncate -s 64M "$d/out.img"
QEMU_EXTRA="-drive file=$d/out.img,format=raw,if=virtio" BOOT_TIMEOUT=300 boot_esp linux
L=$d/debugcon.log
contains "linux reader: efipt.efi armed the recorder over the kernel" "$L" "recorder armed: generation 1,"
contains "linux reader: the kernel's ExitBootServices took the images again" "$L" \
	"efipt: ExitBootServices: recorder:"
contains "linux reader: the kernel booted the initramfs" "$d/serial.log" "reader: Linux $VER up"
mkdir -p "$d/res"
if ! tar -x -f "$d/out.img" -C "$d/res" 2>"$d/tar.err" || [ ! -f "$d/res/recover.txt" ]; then
	nok "linux reader: results on the second disk" "$(cat "$d/tar.err"; tail -c 500 "$d/serial.log")"
	exit 0
fi
contains "linux reader: efipt recover --linux recovered it" "$d/res/recover.txt" \
	"reader: efipt recover exit 0"
region=$(sed -n 's/.*recorder armed: generation 1, [0-9]* KiB at 0x\([0-9a-f]*\)-.*/\1/p' "$L" | head -n 1)
expect "linux reader: Linux lists the region as reserved (/proc/iomem)" \
	grep -qi "^0*$region-.* : Reserved" "$d/res/iomem.txt"
R=$d/res/run
expect_rc "linux reader: efipt info accepts the run directory" 0 $EFIPT info "$R"
expect "linux reader: manifest: read from Linux, after ExitBootServices, code taken there" python3 -c "
import json; m = json.load(open('$R/manifest.json')); r = m['recovered']
assert r['reader'] == 'efipt recover --linux' and r['from_boot'] == 1 and not r['live'], r
assert r['exit_boot_services'] and r['code_snapshots_at_exit'] > 0, r
assert m['trace']['source'] == 'synthetic' and 'SYNTHETIC' in m['status']['message']
assert m['traced_image']['path'] == '\\\\vmlinuz'"
POS=$(sed -n 's/.*write position \(0x[0-9a-f]*\)$/\1/p' "$L" | head -n 1)
check_truth "$R" "linux reader"
# the kernel's symbols of this boot (nokaslr: its link addresses), for make test-kernel
if grep -q " T x86_64_start_kernel$" "$d/res/kallsyms" &&
	! grep -q "^0000000000000000 T x86_64_start_kernel$" "$d/res/kallsyms"; then
	cp "$d/res/kallsyms" "$K/kallsyms"
	ok "linux reader: /proc/kallsyms of the booted kernel kept ($K/kallsyms)"
else
	nok "linux reader: /proc/kallsyms of the booted kernel" "no x86_64_start_kernel with an address"
fi
