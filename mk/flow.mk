# Flow decoder (core/pt_flow*, core/pt_synth*): libFuzzer target and the
# benchmark against libipt. Included by the Makefile.
#   make fuzz    runs fuzz-pt-flow for $(FUZZ_SECONDS)
#   make test    builds the fuzzer; tests/fuzz/t_fuzz_pt_flow.sh runs it ~15 s
#   make bench   runs bench-pt-flow (>= 100M instructions of synthesized trace
#                over libc, decoded by efipt, libipt pt_insn_next and pt_blk_next)
FLOW_SRC := core/pt_flow.c core/pt_flow_cache.c core/pt_flow_walk.c core/pt_synth.c core/pt_pkt_dec.c core/pt_pkt_enc.c \
	core/x86_insn.c core/x86_valid.c core/pt_time.c
FLOW_DEP := $(FLOW_SRC) core/pt_flow.h core/pt_flow_int.h core/pt_opcodes.h core/pt_synth.h core/pt_image.h core/pt_pkt.h core/pt_time.h \
	core/x86_insn.h core/x86_valid.h core/mem.h

$(BUILD)/fuzz/fuzz_pt_flow: tests/fuzz/fuzz_pt_flow.c $(FLOW_DEP)
	@mkdir -p $(dir $@)
	$(CLANG) -std=gnu11 -O1 -g -I. -Wall -Wextra \
		-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
		-o $@ tests/fuzz/fuzz_pt_flow.c $(FLOW_SRC)

.PHONY: fuzz-pt-flow bench-pt-flow
fuzz-pt-flow: $(BUILD)/fuzz/fuzz_pt_flow
	@mkdir -p $(BUILD)/fuzz/corpus-pt-flow
	FLOW_FUZZ_SEEDS=$(BUILD)/fuzz/corpus-pt-flow $< -max_total_time=$(FUZZ_SECONDS) \
		-max_len=4096 -print_final_stats=1 $(BUILD)/fuzz/corpus-pt-flow

$(BUILD)/bench/bench_pt_flow: tests/bench/bench_pt_flow.c $(BUILD)/libefipt-host.a
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O2 -g $(WARN) -I. -o $@ tests/bench/bench_pt_flow.c \
		$(BUILD)/libefipt-host.a -lipt

bench-pt-flow: $(BUILD)/bench/bench_pt_flow
	$<

FUZZ_TARGETS  += fuzz-pt-flow
BENCH_TARGETS += bench-pt-flow
TEST_EXTRA    += $(BUILD)/fuzz/fuzz_pt_flow
