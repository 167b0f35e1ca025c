# Flow decoder (core/pt_flow*, core/pt_synth*): libFuzzer target and the
# benchmark against libipt. Included by the Makefile.
#   make fuzz    runs fuzz-pt-flow for $(FUZZ_SECONDS)
#   make test    builds the fuzzer; tests/fuzz/t_fuzz_pt_flow.sh runs it ~15 s
#   make bench   runs bench-pt-flow (>= 100M instructions of synthesized trace
#                over libc, decoded by efipt, libipt pt_insn_next and pt_blk_next)
FUZZ_TARGETS += pt_flow
FUZZ_ARGS_pt_flow := -max_len=4096
FUZZ_ENV_pt_flow = FLOW_FUZZ_SEEDS=$(1)

.PHONY: bench-pt-flow
$(BUILD)/bench/bench_pt_flow: tests/bench/bench_pt_flow.c $(BUILD)/libefipt-host.a
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O2 -g $(WARN) -I. -MMD -MP -o $@ tests/bench/bench_pt_flow.c \
		$(BUILD)/libefipt-host.a -lipt

bench-pt-flow: $(BUILD)/bench/bench_pt_flow
	$<

BENCH_TARGETS += bench-pt-flow
