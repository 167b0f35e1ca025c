# Packet layer (core/pt_pkt*): the libFuzzer target and the benchmark
# against libipt. Included by the Makefile.
#   make fuzz    runs fuzz-pt-pkt for $(FUZZ_SECONDS)
#   make test    builds the fuzzer; tests/fuzz/t_fuzz_pt_pkt.sh runs it ~20 s
#   make bench   runs bench-pt-pkt (a >= 256 MiB trace in memory)
PTPKT_SRC := core/pt_pkt_dec.c core/pt_pkt_enc.c
PTPKT_DEP := $(PTPKT_SRC) core/pt_pkt.h core/mem.h

$(BUILD)/fuzz/fuzz_pt_pkt: tests/fuzz/fuzz_pt_pkt.c $(PTPKT_DEP)
	@mkdir -p $(dir $@)
	$(CLANG) -std=gnu11 -O1 -g -I. -Wall -Wextra \
		-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
		-o $@ tests/fuzz/fuzz_pt_pkt.c $(PTPKT_SRC)

.PHONY: fuzz-pt-pkt bench-pt-pkt
fuzz-pt-pkt: $(BUILD)/fuzz/fuzz_pt_pkt
	@mkdir -p $(BUILD)/fuzz/corpus-pt-pkt
	python3 tests/cli/packets_gen.py all >$(BUILD)/fuzz/corpus-pt-pkt/seed-all
	python3 tests/cli/packets_gen.py errors >$(BUILD)/fuzz/corpus-pt-pkt/seed-errors
	$< -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 $(BUILD)/fuzz/corpus-pt-pkt

$(BUILD)/bench/bench_pt_pkt: tests/bench/bench_pt_pkt.c tests/lib/ptpkt_gen.c $(PTPKT_DEP)
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O2 -g $(WARN) -I. -Itests -o $@ tests/bench/bench_pt_pkt.c \
		tests/lib/ptpkt_gen.c $(PTPKT_SRC) -lipt

bench-pt-pkt: $(BUILD)/bench/bench_pt_pkt
	$<

FUZZ_TARGETS  += fuzz-pt-pkt
BENCH_TARGETS += bench-pt-pkt
TEST_EXTRA    += $(BUILD)/fuzz/fuzz_pt_pkt
