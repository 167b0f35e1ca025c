# The flight recorder (core/recorder*.c, efi/recorder*.c, docs/recorder.md).
#   make fuzz    runs fuzz-recorder (the region parser) for $(FUZZ_SECONDS)
#   make test    builds it; tests/fuzz/t_fuzz_recorder.sh runs it ~10 s
FUZZ_TARGETS += recorder
FUZZ_SEED_recorder = sh tests/fuzz/recorder_seeds.sh $(1)

# A UEFI app that resets, hangs and damages a recorder for the QEMU tests
# (tests/qemu/rectool.c, t_recorder.sh)
$(BUILD)/tests/rectool.so: tests/qemu/rectool.c $(BUILD)/efi/core/crc32.o linker.ld | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(EFI_CFLAGS) -c $< -o $(BUILD)/tests/rectool.o
	ld $(EFI_LDFLAGS) $(EFI_CRT0) $(BUILD)/tests/rectool.o $(BUILD)/efi/core/crc32.o -o $@ \
		-lefi -lgnuefi $(shell $(CC) -print-libgcc-file-name)

$(BUILD)/tests/rectool.efi: $(BUILD)/tests/rectool.so
	objcopy -j .text -j .sdata -j .data -j .dynamic -j .dynsym -j .rel \
		-j .rela -j .reloc --target=efi-app-x86_64 --subsystem=10 $< $@

TEST_EXTRA += $(BUILD)/tests/rectool.efi

# Debian's kernel and busybox-static for the tests that boot Linux
# (tests/qemu/get-kernel.sh: apt-get download, nothing installed). Without
# network the tests that need them skip, nothing fails.
.PHONY: kernel kernel-if-possible test-kernel
kernel: | $(DEPS_STAMP)
	sh tests/qemu/get-kernel.sh $(BUILD)/kernel

kernel-if-possible: | $(DEPS_STAMP)
	@sh tests/qemu/get-kernel.sh $(BUILD)/kernel || \
		echo "note: no Debian kernel in $(BUILD)/kernel (see above); the Linux tests skip"

TEST_EXTRA += kernel-if-possible

# Real execution through ExitBootServices into the kernel under efipt qemu
# (about 5 minutes: the EFI stub decompresses the kernel, 4.8e9 instructions
# traced): tests/qemu/t_recorder_start_kernel.sh, part of make test; this
# runs it alone.
test-kernel: all qemu-plugin kernel
	sh tests/qemu/t_recorder_start_kernel.sh

# the seed corpus comes from test_recorder (a region written over the PT model)
fuzz-recorder: $(BUILD)/tests/test_recorder
