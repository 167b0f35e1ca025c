# Symbols and call stacks (decode/symbols, decode/stack): efipt top against
# efipt insn --stat on the same 100 M-instruction trace.
.PHONY: bench-top
bench-top: all
	EFIPT_BUILD=$(BUILD) sh tests/bench/bench_top.sh
BENCH_TARGETS += bench-top
