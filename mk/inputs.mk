# Fuzzing efipt's other untrusted inputs (CPUID dumps, PE headers, command
# lines and trace options): tests/fuzz/fuzz_inputs.c.
#   make fuzz    runs fuzz-inputs for $(FUZZ_SECONDS)
#   make test    builds it; tests/fuzz/t_fuzz_inputs.sh runs it ~10 s
FUZZ_TARGETS += inputs
FUZZ_SEED_inputs = sh tests/fuzz/inputs_seeds.sh $(1)
