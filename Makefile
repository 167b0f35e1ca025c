# efipt — build, test and boot.
#   make          build/efipt.efi (UEFI application) and build/efipt (host CLI)
#   make test     every test: unit, CLI, fuzz smoke, QEMU+OVMF integration
#   make run      boot efipt.efi under QEMU+OVMF and show what it found
#   make esp      build/esp/ — a ready EFI System Partition directory tree
#   make usb      build/efipt-usb.img — a GPT disk image to dd onto a USB stick
#   make bench    decoder throughput side by side with libipt
#   make fuzz     run the fuzz targets for FUZZ_SECONDS each (default 600)
#   make SANITIZE=1 [test]  the host CLI and unit tests with ASan and UBSan, in
#                 build/san/; "test" runs the unit and CLI tests under them
# Missing Debian packages are installed first (mk/deps.sh).

CC      ?= gcc
CLANG   ?= clang
ifeq ($(origin CC),default)
CC      := gcc
endif
# SANITIZE=1: host objects with AddressSanitizer and UBSan (any undefined
# behaviour stops the program), in their own build directory. Built with
# clang: gcc's UBSan runtime ignores log_path, where tests/run.sh reads
# the reports from.
ifneq ($(SANITIZE),)
BUILD   ?= build/san
CC      := $(CLANG)
SAN_FLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
endif
BUILD   ?= build

VERSION := $(shell cat VERSION 2>/dev/null || echo 0.0.0)
GITREV  := $(shell git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)

WARN    := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes
# The version lives in one generated file, rewritten only when it changes,
# so a new commit relinks without recompiling everything.
VERSION_C := $(BUILD)/gen/version.c
$(shell mkdir -p $(BUILD)/gen; \
  printf '#include "core/version.h"\nconst char efipt_version[] = "%s";\nconst char efipt_gitrev[] = "%s";\n' \
    '$(VERSION)' '$(GITREV)' > $(VERSION_C).new; \
  cmp -s $(VERSION_C).new $(VERSION_C) || mv $(VERSION_C).new $(VERSION_C); rm -f $(VERSION_C).new)
DEFS    :=

CORE_SRC := $(wildcard core/*.c)
ARCH_SRC := $(wildcard arch/x86_64/*.c)
EFI_SRC  := $(wildcard efi/*.c)
HOST_SRC := $(filter-out host/main.c,$(wildcard host/*.c host/*/*.c))
# Files that only make sense in one world carry a suffix:
#   *_efi.c  is built only into efipt.efi, *_host.c only into the host build.
EFI_ARCH_SRC  := $(filter-out %_host.c,$(ARCH_SRC))
HOST_ARCH_SRC := $(filter-out %_efi.c,$(ARCH_SRC))

# ---- host build -------------------------------------------------------------
HOST_CFLAGS := -std=gnu11 -O2 -g $(WARN) $(DEFS) -I. -D_GNU_SOURCE $(SAN_FLAGS)
# efipt itself does not use libipt: only tests and benchmarks link it (to
# compare against it)
HOST_LIBS   := -lZydis -ljansson -ldw -lelf -llzma
TEST_LIBS   := -lipt $(HOST_LIBS)

HOST_OBJ := $(patsubst %.c,$(BUILD)/host/%.o,$(CORE_SRC) $(HOST_ARCH_SRC) $(HOST_SRC)) \
	$(BUILD)/host/gen/version.o

# ---- core freestanding check --------------------------------------------------
# core/ must compile with no libc at all: only the compiler's own headers.
FREE_CFLAGS := -std=gnu11 -O2 $(WARN) -ffreestanding -nostdlib -nostdinc \
	-isystem $(shell $(CC) -print-file-name=include) -I. -fno-builtin
FREE_OBJ := $(patsubst %.c,$(BUILD)/free/%.o,$(CORE_SRC))

# ---- EFI build (gnu-efi) ------------------------------------------------------
EFI_INC    := /usr/include/efi
EFI_LIBDIR := /usr/lib
EFI_CRT0   := $(EFI_LIBDIR)/crt0-efi-x86_64.o
EFI_CFLAGS := -std=gnu11 -O2 -g $(WARN) $(DEFS) -I. -isystem $(EFI_INC) -isystem $(EFI_INC)/x86_64 \
	-ffreestanding -fpic -fshort-wchar -fno-stack-protector -fno-strict-aliasing \
	-fno-stack-check -mno-red-zone -maccumulate-outgoing-args \
	-DGNU_EFI_USE_MS_ABI -DEFIPT_EFI
EFI_LDFLAGS := -nostdlib -znocombreloc -T linker.ld -shared -Bsymbolic --no-undefined \
	-L$(EFI_LIBDIR)
EFI_OBJ := $(patsubst %.c,$(BUILD)/efi/%.o,$(CORE_SRC) $(EFI_ARCH_SRC) $(EFI_SRC)) \
	$(BUILD)/efi/gen/version.o

# ---- tests --------------------------------------------------------------------
TEST_SRC := $(wildcard tests/unit/test_*.c)
TEST_BIN := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(TEST_SRC))
# Test-only helpers (models, synthesizers) shared by several test programs.
TEST_LIB_SRC := $(wildcard tests/lib/*.c)
TEST_LIB_OBJ := $(patsubst %.c,$(BUILD)/host/%.o,$(TEST_LIB_SRC))

# "make" builds efipt.efi and efipt, whatever the fragments below define first.
.DEFAULT_GOAL := all

# Modules may add targets and prerequisites here (bench, fuzz, extra test data).
BENCH_TARGETS :=
FUZZ_TARGETS  :=
TEST_EXTRA    :=
DEPS_STAMP := $(BUILD)/.deps-ok
-include mk/*.mk

# One rule for every fuzz target NAME in FUZZ_TARGETS (set in mk/*.mk):
# build/fuzz/fuzz_NAME is tests/fuzz/fuzz_NAME.c linked with core/ (an
# archive: the linker takes the files it needs) and FUZZ_LIBS_NAME, all built
# with clang's fuzzer, ASan and UBSan and header dependencies from -MMD.
# "make fuzz-NAME" (underscores become dashes) fills build/fuzz/corpus-NAME
# with $(call FUZZ_SEED_NAME,DIR), then runs the fuzzer for FUZZ_SECONDS with
# FUZZ_ARGS_NAME and the environment $(call FUZZ_ENV_NAME,DIR).
FUZZ_SECONDS ?= 600
FUZZ_CFLAGS := -std=gnu11 -O1 -g -I. -Wall -Wextra \
	-fsanitize=address,undefined -fno-sanitize-recover=all
FUZZ_CORE := $(BUILD)/fuzz/libcore.a

$(BUILD)/fuzz/obj/%.o: %.c | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CLANG) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -MMD -MP -c $< -o $@

$(FUZZ_CORE): $(patsubst %.c,$(BUILD)/fuzz/obj/%.o,$(CORE_SRC))
	@rm -f $@
	ar rcs $@ $^

define fuzz_rule
$(BUILD)/fuzz/fuzz_$(1): $(BUILD)/fuzz/obj/tests/fuzz/fuzz_$(1).o $(FUZZ_CORE)
	$(CLANG) $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $$@ $$^ $(FUZZ_LIBS_$(1))

.PHONY: fuzz-$(subst _,-,$(1))
fuzz-$(subst _,-,$(1)): $(BUILD)/fuzz/fuzz_$(1)
	@mkdir -p $(BUILD)/fuzz/corpus-$(subst _,-,$(1))
	$$(call FUZZ_SEED_$(1),$(BUILD)/fuzz/corpus-$(subst _,-,$(1)))
	$$(call FUZZ_ENV_$(1),$(BUILD)/fuzz/corpus-$(subst _,-,$(1))) $$< \
		-max_total_time=$$(FUZZ_SECONDS) $(FUZZ_ARGS_$(1)) -print_final_stats=1 \
		$(BUILD)/fuzz/corpus-$(subst _,-,$(1))

TEST_EXTRA += $(BUILD)/fuzz/fuzz_$(1)
endef
$(foreach t,$(FUZZ_TARGETS),$(eval $(call fuzz_rule,$(t))))

fuzz: $(foreach t,$(FUZZ_TARGETS),fuzz-$(subst _,-,$(t)))

# keep intermediate objects (test helpers), and let "N passed, N failed" be the last line
.SECONDARY:

.PHONY: all deps test run esp usb bench fuzz clean check-core check-efi
ifeq ($(SANITIZE),)
all: $(BUILD)/efipt.efi $(BUILD)/efipt
else
all: $(BUILD)/efipt $(TEST_BIN)
endif

deps: $(DEPS_STAMP)
$(DEPS_STAMP): mk/deps.sh
	@mkdir -p $(BUILD)
	@DEPS_LOG=$(BUILD)/deps.log sh mk/deps.sh
	@touch $@

$(BUILD)/host/%.o: %.c | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(HOST_CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/free/%.o: %.c | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(FREE_CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/efi/%.o: %.c | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(EFI_CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/host/gen/version.o: $(VERSION_C)
	@mkdir -p $(dir $@)
	$(CC) $(HOST_CFLAGS) -c $< -o $@

$(BUILD)/efi/gen/version.o: $(VERSION_C)
	@mkdir -p $(dir $@)
	$(CC) $(EFI_CFLAGS) -c $< -o $@

$(BUILD)/libefipt-host.a: $(HOST_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/efipt: $(BUILD)/host/host/main.o $(BUILD)/libefipt-host.a
	$(CC) $(SAN_FLAGS) -o $@ $^ $(HOST_LIBS)

$(BUILD)/efipt.so: $(EFI_OBJ) linker.ld
	ld $(EFI_LDFLAGS) $(EFI_CRT0) $(EFI_OBJ) -o $@ -lefi -lgnuefi \
		$(shell $(CC) -print-libgcc-file-name)

$(BUILD)/efipt.efi: $(BUILD)/efipt.so
	objcopy -j .text -j .sdata -j .data -j .dynamic -j .dynsym -j .rel \
		-j .rela -j .reloc --target=efi-app-x86_64 --subsystem=10 $< $@

# core/ has no libc: every core file builds freestanding and includes nothing
# beyond stdint.h, stddef.h, stdbool.h and other core headers.
check-core: $(FREE_OBJ)
	@sh mk/check-core.sh

# efipt.efi must resolve every symbol at link time (firmware has no loader).
check-efi: $(BUILD)/efipt.so
	@u=$$(nm -u $< | grep -v '^ *w ' || true); \
	if [ -n "$$u" ]; then echo "undefined symbols in efipt.efi:"; echo "$$u"; exit 1; fi

$(BUILD)/tests/%: tests/unit/%.c $(BUILD)/libefipt-host.a $(TEST_LIB_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(HOST_CFLAGS) -Itests -MMD -MP -o $@ $< $(TEST_LIB_OBJ) $(BUILD)/libefipt-host.a $(TEST_LIBS) \
		$(TEST_LDFLAGS_$*)

ifeq ($(SANITIZE),)
test: all $(TEST_BIN) $(TEST_EXTRA) $(FREE_OBJ)
	@sh tests/run.sh $(TESTS)
else
# Unit and CLI tests (SAN_TEST_DIRS="cli qemu" adds the QEMU boots, whose
# run directories the sanitized efipt then reads): efipt.efi is not
# sanitized, and the fuzz targets always are. The tests' input files
# (build/efipt.efi, build/x86code/) come from the plain build; tests/run.sh
# fails a test on any sanitizer report.
SAN_TEST_DIRS ?= cli
# (the CLI tests' own host tools are built sanitized too)
test: all $(BUILD)/tests/ptunit_replay
	@$(MAKE) --no-print-directory SANITIZE= BUILD=build build/efipt.efi build/x86code/.stamp
	@EFIPT_BUILD=$(BUILD) EFIPT_TEST_DIRS="$(SAN_TEST_DIRS)" EFIPT_SANITIZED=1 sh tests/run.sh $(TESTS)
endif

run: all qemu-plugin-if-possible
	sh ovmf/run.sh

esp: all
	sh ovmf/mkesp.sh --dir $(BUILD)/esp

usb: all
	sh ovmf/mkesp.sh --disk $(BUILD)/efipt-usb.img

ifeq ($(SANITIZE),)
bench: all $(BENCH_TARGETS)
else
bench:
	@echo "make bench measures the plain build: run it without SANITIZE" >&2; exit 2
endif

clean:
	rm -rf $(BUILD)

# (not inside the Debian 13 root of make check-debian13)
-include $(shell find $(BUILD) -path $(BUILD)/debian13 -prune -o -name '*.d' -type f -print 2>/dev/null)
