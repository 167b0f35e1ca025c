# x86 instruction length decoder (core/x86_insn*): generated validity table,
# libFuzzer target and benchmark. Included by the Makefile.
#   make x86-tables   regenerate core/x86_valid.c with Zydis (about 2 min)
#   make fuzz         runs fuzz-x86-insn for $(FUZZ_SECONDS)
#   make test         builds the fuzzer; tests/fuzz/t_fuzz_x86_insn.sh runs it ~15 s
#   make bench        runs bench-x86-insn (x86_decode vs Zydis on real .text)
FUZZ_TARGETS += x86_insn
FUZZ_LIBS_x86_insn := -lZydis
FUZZ_ARGS_x86_insn := -max_len=256

$(BUILD)/gen/x86_valid_gen: core/gen/x86_valid_gen.c core/x86_valid.h | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O2 $(WARN) -I. -o $@ $< -lZydis

.PHONY: x86-tables bench-x86-insn
x86-tables: $(BUILD)/gen/x86_valid_gen
	$< core/x86_valid.c

$(BUILD)/bench/bench_x86_insn: tests/bench/bench_x86_insn.c $(BUILD)/libefipt-host.a
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O2 -g $(WARN) -I. -MMD -MP -o $@ tests/bench/bench_x86_insn.c \
		$(BUILD)/libefipt-host.a -lZydis

bench-x86-insn: $(BUILD)/bench/bench_x86_insn
	$<

BENCH_TARGETS += bench-x86-insn

# Real 32- and 16-bit code for the Zydis comparison: clang compiles core/
# with -m32 and -m16 (16-bit mode code with 66h/67h everywhere), plain and
# with AVX-512/AVX2 so that VEX and EVEX appear outside 64-bit mode.
X86CODE := $(BUILD)/x86code
$(X86CODE)/.stamp: $(CORE_SRC) mk/x86.mk
	@rm -rf $(X86CODE)/m32 $(X86CODE)/m16
	@mkdir -p $(X86CODE)/m32 $(X86CODE)/m16
	@for f in $(CORE_SRC); do b=$$(basename $$f .c); \
		c="$(CLANG) -std=gnu11 -ffreestanding -fno-builtin -fno-pic -I. -w -c $$f"; \
		$$c -m32 -O2 -o $(X86CODE)/m32/$$b.o 2>/dev/null; \
		$$c -m32 -O3 -march=skylake-avx512 -o $(X86CODE)/m32/$$b-avx512.o 2>/dev/null; \
		$$c -m16 -O2 -o $(X86CODE)/m16/$$b.o 2>/dev/null; \
		$$c -m16 -O3 -march=haswell -o $(X86CODE)/m16/$$b-avx2.o 2>/dev/null; \
	done; true
	@touch $@

TEST_EXTRA    += $(X86CODE)/.stamp
