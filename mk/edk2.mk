# EfiptPkg (edk2/, docs/edk2.md): the firmware's own boot traced from PEI,
# collected by efipt.efi. Its tests boot OVMF built with it from Debian's
# edk2 source package (edk2/ovmf/build.sh: the patch there is the worked
# example of the lines a platform adds).
#   make ovmf-efipt   build/edk2/ovmf/OVMF_CODE.fd: OvmfPkgX64, DEBUG, GCC5,
#                     -n 2 (about 6 min on 2 cores the first time; then
#                     only what changed)
#   make test         builds it; without Debian's archive (the source comes
#                     from there the first time) its QEMU tests skip; a
#                     build that fails fails make test
# One build serves the plain and the sanitized test runs: build/edk2, not
# $(BUILD)/edk2.
EDK2_WORK := build/edk2
EDK2_OVMF := $(EDK2_WORK)/ovmf/OVMF_CODE.fd
# what the package builds from: its own files and efipt's core/ and arch/
EDK2_INPUTS := $(shell find edk2 -type f 2>/dev/null) $(wildcard core/*.c core/*.h \
	arch/x86_64/*.c arch/x86_64/*.h) mk/edk2-source.sh mk/debian-source.sh mk/private-apt.sh

$(EDK2_OVMF): $(EDK2_INPUTS) | $(DEPS_STAMP)
	@rm -f $(EDK2_WORK)/UNAVAILABLE
	sh edk2/ovmf/build.sh $(EDK2_WORK) || { rc=$$?; [ $$rc -ne 3 ] || \
		{ mkdir -p $(EDK2_WORK); echo "Debian's edk2 source could not be had" \
			>$(EDK2_WORK)/UNAVAILABLE; }; exit $$rc; }

.PHONY: ovmf-efipt ovmf-efipt-if-possible
ovmf-efipt: $(EDK2_OVMF)

# for make test: no source (no network) is a skip, a failed build a failure
ovmf-efipt-if-possible: | $(DEPS_STAMP)
	@$(MAKE) --no-print-directory $(EDK2_OVMF) || [ -f $(EDK2_WORK)/UNAVAILABLE ]

TEST_EXTRA += ovmf-efipt-if-possible

# the boot trace record and options, fuzzed (tests/fuzz/fuzz_fwtrace.c):
# core/ and the boot trace steps of arch/x86_64 over checked records
FUZZ_TARGETS += fwtrace
$(BUILD)/fuzz/fuzz_fwtrace: $(BUILD)/fuzz/obj/arch/x86_64/boot_trace.o \
	$(BUILD)/fuzz/obj/arch/x86_64/pt_engine.o $(BUILD)/fuzz/obj/arch/x86_64/pt_output.o \
	$(BUILD)/fuzz/obj/core/pt_unit.o
