# The traces the benchmarks share, made once and kept in $build/bench
# (sourced; needs build, efipt). Each is kept with what it was made over:
# decoded against a rebuilt efipt.efi a trace would stop at the first
# changed byte (a decode error) and time next to nothing.

# walk_trace M: a synthetic random walk of M million instructions through
# efipt.efi's code, the worst case for the analyses (a frame change every
# 12 instructions, branches no predictor learns). Sets trace, img, syms
# (efipt.so) and pe (the --pe option).
walk_trace() {
	trace=$build/bench/top-$1.pt
	img=$build/bench/top-$1.efi
	syms=$build/bench/top-$1.so
	pe="--pe $img:0x1000000"
	mkdir -p "$build/bench"
	if [ ! -f "$trace" ] || [ ! -f "$img" ] || [ ! -f "$syms" ]; then
		cp "$build/efipt.efi" "$img.tmp" && mv "$img.tmp" "$img"
		cp "$build/efipt.so" "$syms.tmp" && mv "$syms.tmp" "$syms"
		$efipt synth --out "$trace.tmp" $pe --insns ${1}000000 --size 1G --seed 1 >/dev/null 2>&1
		mv "$trace.tmp" "$trace"
	fi
}

# boot_run: a whole OVMF boot from the reset vector with TSC and MTC
# packets (efipt qemu --tsc --mtc under -icount shift=3, so that it is the
# same each time; 1.1e9 instructions), Debian's OVMF. Sets boot (the run
# directory); returns 1 when efipt qemu failed.
boot_run() {
	boot=$build/bench/top-boot
	[ -f "$boot/manifest.json" ] && return 0
	tmp=$build/bench/top-boot.tmp
	rm -rf "$tmp"
	mkdir -p "$tmp"
	cp /usr/share/OVMF/OVMF_VARS_4M.fd "$tmp/vars.fd"
	echo "tracing a whole OVMF boot with TSC and MTC (1.1e9 instructions) ..."
	if ! timeout 900 $efipt qemu -o "$tmp/run" --start reset --tsc --mtc --limit 1100000000 -- \
		-machine q35 -m 512 -smp 1 -accel tcg -cpu max -icount shift=3,sleep=off \
		-drive if=pflash,format=raw,unit=0,readonly=on,file=/usr/share/OVMF/OVMF_CODE_4M.fd \
		-drive if=pflash,format=raw,unit=1,file="$tmp/vars.fd" \
		-display none -nodefaults -no-reboot -net none >"$tmp/out" 2>&1; then
		echo "efipt qemu failed: $(tail -n 3 "$tmp/out")" >&2
		return 1
	fi
	rm -rf "$boot"
	mv "$tmp/run" "$boot"
	rm -rf "$tmp"
}
