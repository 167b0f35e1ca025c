# Symbols and call stacks (host/symbols, host/stack): efipt top against
# efipt insn --stat on the same 100 M-instruction trace.
.PHONY: bench-top
bench-top: all
	EFIPT_BUILD=$(BUILD) sh tests/bench/bench_top.sh
BENCH_TARGETS += bench-top

# Real EDK2 build output as symbol fixtures (tests/data/edk2): rebuilds the
# committed files from Debian's edk2 source package. Tests never need it.
.PHONY: edk2-fixture
edk2-fixture:
	nice sh tests/data/edk2/make_fixture.sh $(BUILD)/edk2-fixture

# every analysis next to insn --stat (tests/bench/bench_analyses.sh)
.PHONY: bench-analyses
bench-analyses: all
	EFIPT_BUILD=$(BUILD) sh tests/bench/bench_analyses.sh
BENCH_TARGETS += bench-analyses
