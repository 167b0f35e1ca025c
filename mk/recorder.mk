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
