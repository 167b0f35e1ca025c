# Flow decoder (core/pt_flow*, core/pt_synth*): libFuzzer target and the
# benchmark against libipt. Included by the Makefile.
#   make fuzz    runs fuzz-pt-flow for $(FUZZ_SECONDS)
#   make test    builds the fuzzer; tests/fuzz/t_fuzz_pt_flow.sh runs it ~15 s
#   make bench   runs bench-pt-flow (>= 100M instructions of synthesized trace
#                over libc, decoded by efipt, libipt pt_insn_next and pt_blk_next),
#                bench-flow-uefi (UEFI applications from Debian packages) and
#                bench-decode ('efipt decode' against 'efipt insn --stat')
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

# The flow decoder on real UEFI applications from Debian packages (PE32+,
# relocated to BASE; one whose package is missing is skipped), against
# pt_blk_next, with the trace shape that sets the ratio (docs/flow.md, Speed).
BENCH_UEFI_IMAGES := \
	$(BUILD)/efipt.efi:0x40000000 \
	/usr/lib/systemd/boot/efi/systemd-bootx64.efi:0x7f000000 \
	/usr/lib/systemd/boot/efi/linuxx64.efi.stub:0x7f000000 \
	/usr/lib/grub/x86_64-efi/monolithic/grubx64.efi:0x10000000 \
	/usr/lib/shim/shimx64.efi:0x10000000 \
	/usr/lib/shim/mmx64.efi:0x10000000 \
	/usr/lib/ipxe/ipxe.efi:0x10000000 \
	/boot/memtest86+x64.efi:0x10000000
BENCH_UEFI_MINSNS ?= 20

.PHONY: bench-flow-uefi
$(BUILD)/bench/bench_flow_uefi: tests/bench/bench_flow_uefi.c $(BUILD)/libefipt-host.a
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O2 -g $(WARN) -I. -MMD -MP -o $@ tests/bench/bench_flow_uefi.c \
		$(BUILD)/libefipt-host.a -lipt

bench-flow-uefi: $(BUILD)/bench/bench_flow_uefi $(BUILD)/efipt.efi
	$< -n $(BENCH_UEFI_MINSNS) $(BENCH_UEFI_IMAGES)

BENCH_TARGETS += bench-flow-uefi

# 'efipt decode RUNDIR' against 'efipt insn --run RUNDIR --stat' on a run
# directory that efipt.efi synthesizes under QEMU (made once, then kept).
BENCH_DECODE_MINSNS ?= 20
.PHONY: bench-decode
bench-decode: $(BUILD)/efipt $(BUILD)/efipt.efi
	EFIPT_BUILD=$(BUILD) sh tests/bench/bench_decode.sh $(BENCH_DECODE_MINSNS)

BENCH_TARGETS += bench-decode
