#!/bin/busybox sh
# /init of the Linux reader's initramfs (tests/qemu/t_recorder_linux.sh):
# efipt recover --linux on the machine whose loader efipt.efi traced, and
# the results handed out as a tar archive written to the second disk
# (virtio, /dev/vda), with the kernel's symbols (/proc/kallsyms).
/bin/busybox mkdir -p /bin /proc /sys /dev /tmp /out
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs dev /dev 2>/dev/null
# Debian builds these as modules; the order is their dependencies'
for m in efivarfs virtio_ring virtio virtio_pci_legacy_dev virtio_pci_modern_dev virtio_pci \
	virtio_blk; do
	insmod /modules/$m.ko || echo "reader: insmod $m failed"
done
mount -t efivarfs efivarfs /sys/firmware/efi/efivars || echo "reader: mount efivarfs failed"
echo "reader: Linux $(uname -r) up, recovering"
/efipt recover --linux -o /out/run >/out/recover.txt 2>&1
echo "reader: efipt recover exit $?" >>/out/recover.txt
cat /out/recover.txt
grep -i -e reserved -e "system ram" /proc/iomem >/out/iomem.txt 2>&1
cat /proc/kallsyms >/out/kallsyms
n=0
while [ ! -b /dev/vda ] && [ $n -lt 50 ]; do sleep 0.1; n=$((n + 1)); done
if [ -b /dev/vda ] && tar -c -f /dev/vda -C /out . && sync; then
	echo "reader: results written to /dev/vda"
else
	echo "reader: no /dev/vda to write the results to"
fi
poweroff -f
