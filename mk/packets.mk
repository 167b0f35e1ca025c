# Packet layer (core/pt_pkt*): the libFuzzer target and the benchmark
# against libipt. Included by the Makefile.
#   make fuzz    runs fuzz-pt-pkt for $(FUZZ_SECONDS)
#   make test    builds the fuzzer; tests/fuzz/t_fuzz_pt_pkt.sh runs it ~20 s
#   make bench   runs bench-pt-pkt (a >= 256 MiB trace in memory)
FUZZ_TARGETS += pt_pkt
FUZZ_SEED_pt_pkt = python3 tests/cli/packets_gen.py all >$(1)/seed-all && \
	python3 tests/cli/packets_gen.py errors >$(1)/seed-errors

.PHONY: bench-pt-pkt
$(BUILD)/bench/bench_pt_pkt: tests/bench/bench_pt_pkt.c $(BUILD)/host/tests/lib/ptpkt_gen.o \
		$(BUILD)/libefipt-host.a
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O2 -g $(WARN) -I. -Itests -MMD -MP -o $@ tests/bench/bench_pt_pkt.c \
		$(BUILD)/host/tests/lib/ptpkt_gen.o $(BUILD)/libefipt-host.a -lipt

bench-pt-pkt: $(BUILD)/bench/bench_pt_pkt
	$<

BENCH_TARGETS += bench-pt-pkt
