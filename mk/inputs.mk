# Fuzzing efipt's other untrusted inputs (CPUID dumps, PE headers, command
# lines and trace options): tests/fuzz/fuzz_inputs.c.
#   make fuzz    runs fuzz-inputs for $(FUZZ_SECONDS)
#   make test    builds it; tests/fuzz/t_fuzz_inputs.sh runs it ~10 s
INPUTS_SRC := core/cmdline.c core/cpuid_set.c core/pe_info.c core/pt_caps.c \
	core/pt_config.c core/opt_table.c core/cpu_model.c core/strbuf.c

$(BUILD)/fuzz/fuzz_inputs: tests/fuzz/fuzz_inputs.c $(INPUTS_SRC) $(wildcard core/*.h)
	@mkdir -p $(dir $@)
	$(CLANG) -std=gnu11 -O1 -g -I. -Wall -Wextra \
		-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
		-o $@ tests/fuzz/fuzz_inputs.c $(INPUTS_SRC)

.PHONY: fuzz-inputs
fuzz-inputs: $(BUILD)/fuzz/fuzz_inputs
	@mkdir -p $(BUILD)/fuzz/corpus-inputs
	sh tests/fuzz/inputs_seeds.sh $(BUILD)/fuzz/corpus-inputs
	$< -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 $(BUILD)/fuzz/corpus-inputs

FUZZ_TARGETS += fuzz-inputs
TEST_EXTRA   += $(BUILD)/fuzz/fuzz_inputs
