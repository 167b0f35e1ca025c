# The interrupt vectors of emulated runs (interrupts.jsonl: qemu-plugin/idt.h,
# host/input/irqlog.c), fuzzed through tests/fuzz/fuzz_irqlog.c.
#   make fuzz    runs fuzz-irqlog for $(FUZZ_SECONDS)
#   make test    builds it; tests/fuzz/t_fuzz_irqlog.sh runs it ~10 s
FUZZ_TARGETS += irqlog
FUZZ_SEED_irqlog = sh tests/fuzz/irqlog_seeds.sh $(1)
$(BUILD)/fuzz/fuzz_irqlog: $(BUILD)/fuzz/obj/host/input/irqlog.o \
	$(BUILD)/fuzz/obj/host/input/debuglog.o $(BUILD)/fuzz/obj/host/util/file_io.o
FUZZ_LIBS_irqlog = $(FUZZ_CORE) -ljansson
