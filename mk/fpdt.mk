# The firmware's boot-performance records (core/fpdt.c, host/input/fpdt_run.c),
# fuzzed through tests/fuzz/fuzz_fpdt.c: the table walk and the pairing of
# EDK2's start and end records into spans. Seeds: tests/cli/fpdt_gen.py.
#   make fuzz    runs fuzz-fpdt for $(FUZZ_SECONDS)
#   make test    builds it; tests/fuzz/t_fuzz_fpdt.sh runs it ~10 s
FUZZ_TARGETS += fpdt
FUZZ_SEED_fpdt = sh tests/fuzz/fpdt_seeds.sh $(1)
$(BUILD)/fuzz/fuzz_fpdt: $(BUILD)/fuzz/obj/host/input/fpdt_run.o
# the archive again after the host object, which calls into it
FUZZ_LIBS_fpdt = $(FUZZ_CORE)
