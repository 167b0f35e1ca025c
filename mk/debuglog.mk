# The firmware's DEBUG output of emulated runs (debugport.jsonl:
# qemu-plugin/debugport.h, host/input/debuglog.c), fuzzed through
# tests/fuzz/fuzz_debuglog.c.
#   make fuzz    runs fuzz-debuglog for $(FUZZ_SECONDS)
#   make test    builds it; tests/fuzz/t_fuzz_debuglog.sh runs it ~10 s
FUZZ_TARGETS += debuglog
FUZZ_SEED_debuglog = sh tests/fuzz/debuglog_seeds.sh $(1)
$(BUILD)/fuzz/fuzz_debuglog: $(BUILD)/fuzz/obj/host/input/debuglog.o
FUZZ_LIBS_debuglog = -ljansson
