# A flash image's firmware volumes and the search for their modules in a
# run's snapshots (host/qemu/fv.c, host/util/pe_map.c,
# host/qemu/qemu_fvfind.c), fuzzed through tests/fuzz/fuzz_fv.c.
#   make fuzz    runs fuzz-fv for $(FUZZ_SECONDS)
#   make test    builds it; tests/fuzz/t_fuzz_fv.sh runs it ~10 s
FUZZ_TARGETS += fv
FUZZ_SEED_fv = python3 tests/fuzz/fv_seeds.py $(1)
FUZZ_ARGS_fv := -max_len=65536
$(BUILD)/fuzz/fuzz_fv: $(BUILD)/fuzz/obj/host/qemu/fv.o $(BUILD)/fuzz/obj/host/util/pe_map.o \
	$(BUILD)/fuzz/obj/host/qemu/qemu_fvfind.o $(BUILD)/fuzz/obj/host/util/file_io.o
FUZZ_LIBS_fv = $(FUZZ_CORE) -llzma
