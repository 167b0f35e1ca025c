# The QEMU TCG plugin that writes Intel PT for what a guest executes
# (qemu-plugin/, docs/qemu.md), and the test-only instruction logger.
# Included by the Makefile.
#   make qemu-plugin   build/efipt-qemu.so and build/tests/insnlog.so
#   make test          builds them when qemu-plugin.h can be had (it comes
#                      from Debian's qemu source package: network); without
#                      it the plugin tests skip, nothing fails
# QPLUG_DIR holds the qemu-plugin.h built against (get-plugin-header.sh),
# QPLUG_BUILD the plugins and their objects: the defaults are the installed
# QEMU's; mk/qemu10.mk builds them again for QEMU 10.0 in build/qemu10.
# QPLUG_VERSION the Debian version of the QEMU whose header it is (empty:
# the installed one's).
QPLUG_DIR ?= $(BUILD)/qemu-plugin
QPLUG_BUILD ?= $(BUILD)
QPLUG_VERSION ?=
QPLUG_HDR := $(QPLUG_DIR)/qemu/qemu-plugin.h
QPLUG_SRC := $(wildcard qemu-plugin/*.c)
# the core files the plugin links, compiled position-independent
QPLUG_CORE := core/pt_writer.c core/pt_pkt_enc.c core/pt_pkt_dec.c core/x86_insn.c core/x86_valid.c \
	core/pt_unit.c core/pt_caps.c core/cpuid_set.c core/strbuf.c core/cpu_model.c \
	core/codechg.c core/run_manifest.c
QPLUG_OBJ := $(patsubst %.c,$(QPLUG_BUILD)/pic/%.o,$(QPLUG_SRC) $(QPLUG_CORE)) \
	$(QPLUG_BUILD)/pic/gen/version.o
# qemu-plugin.h includes glib.h from plugin API 2 (QEMU 9.0) on; evaluated
# when used, after mk/deps.sh installed it
QPLUG_CFLAGS = -std=gnu11 -O2 -g $(WARN) -I. -I$(QPLUG_DIR) -fPIC -fvisibility=hidden \
	-D_GNU_SOURCE $(shell pkg-config --cflags glib-2.0 2>/dev/null)

# after mk/deps.sh: the header comes from the installed QEMU's version
$(QPLUG_HDR): qemu-plugin/get-plugin-header.sh | $(DEPS_STAMP)
	sh qemu-plugin/get-plugin-header.sh $(QPLUG_DIR) $(QPLUG_VERSION)

$(QPLUG_BUILD)/pic/%.o: %.c | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(QPLUG_CFLAGS) -MMD -MP -c $< -o $@

$(QPLUG_BUILD)/pic/qemu-plugin/%.o: qemu-plugin/%.c $(QPLUG_HDR) | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(QPLUG_CFLAGS) -MMD -MP -c $< -o $@

$(QPLUG_BUILD)/pic/gen/version.o: $(VERSION_C)
	@mkdir -p $(dir $@)
	$(CC) $(QPLUG_CFLAGS) -c $< -o $@

# QEMU provides the qemu_plugin_* symbols, and glib's (g_*: linked into QEMU);
# anything else unresolved is a bug
$(QPLUG_BUILD)/efipt-qemu.so: $(QPLUG_OBJ)
	$(CC) -shared -o $@.tmp $^ -lpthread
	@u=$$(nm -u $@.tmp | grep -v ' w ' | grep -v 'qemu_plugin_' | grep -v ' g_' | grep -v '@' || true); \
	if [ -n "$$u" ]; then echo "undefined symbols in $@:"; echo "$$u"; rm -f $@.tmp; exit 1; fi
	mv $@.tmp $@

$(QPLUG_BUILD)/tests/insnlog.so: tests/qemu/insnlog.c qemu-plugin/plugin_api.h $(QPLUG_HDR)
	@mkdir -p $(dir $@)
	$(CC) $(QPLUG_CFLAGS) -shared -o $@ $<

.PHONY: qemu-plugin qemu-plugin-if-possible
qemu-plugin: $(QPLUG_BUILD)/efipt-qemu.so $(QPLUG_BUILD)/tests/insnlog.so

# for make test: a missing header (no network) is a skip, not a failure
qemu-plugin-if-possible: | $(DEPS_STAMP)
	@if sh qemu-plugin/get-plugin-header.sh $(QPLUG_DIR); then \
		$(MAKE) --no-print-directory qemu-plugin; \
	else \
		echo "note: build/efipt-qemu.so not built (no qemu-plugin.h, see above); its tests skip"; \
	fi

TEST_EXTRA += qemu-plugin-if-possible

# libipt's decoder over a plugin trace (tests/qemu/t_qemu_plugin.sh)
$(BUILD)/tests/ipt_insns: tests/qemu/ipt_insns.c tests/libipt_insn.h | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(HOST_CFLAGS) -o $@ $< -lipt

TEST_EXTRA += $(BUILD)/tests/ipt_insns

# The inference without QEMU (tests/unit/test_qemu_infer.c): host objects,
# no qemu-plugin.h needed.
QINFER_OBJ := $(patsubst %.c,$(BUILD)/host/%.o,qemu-plugin/infer.c qemu-plugin/ptgen.c \
	qemu-plugin/insn_info.c)
$(BUILD)/tests/test_qemu_infer: tests/unit/test_qemu_infer.c $(QINFER_OBJ) \
		$(BUILD)/libefipt-host.a $(TEST_LIB_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(HOST_CFLAGS) -Itests -MMD -MP -o $@ $< $(QINFER_OBJ) $(TEST_LIB_OBJ) \
		$(BUILD)/libefipt-host.a $(TEST_LIBS)

# make bench: the plugin's cost next to QEMU alone (qemu-plugin/bench.sh)
.PHONY: bench-qemu-plugin
bench-qemu-plugin: qemu-plugin-if-possible
	sh qemu-plugin/bench.sh
BENCH_TARGETS += bench-qemu-plugin
$(BUILD)/tests/test_qemu_options: tests/unit/test_qemu_options.c \
		$(BUILD)/host/qemu-plugin/options.o
	@mkdir -p $(dir $@)
	$(CC) $(HOST_CFLAGS) -Itests -MMD -MP -o $@ $< $(BUILD)/host/qemu-plugin/options.o

# A test-only UEFI app (gnu-efi, as efipt.efi): $(call test_app,NAME,SOURCE,
# DEFINES) makes build/tests/NAME.efi and adds it to TEST_EXTRA.
define test_app
$(BUILD)/tests/$(1).so: $(2) linker.ld | $(DEPS_STAMP)
	@mkdir -p $$(dir $$@)
	$$(CC) $$(EFI_CFLAGS) $(3) -c $$< -o $(BUILD)/tests/$(1).o
	ld $$(EFI_LDFLAGS) $$(EFI_CRT0) $(BUILD)/tests/$(1).o -o $$@ -lefi -lgnuefi \
		$$(shell $$(CC) -print-libgcc-file-name)

$(BUILD)/tests/$(1).efi: $(BUILD)/tests/$(1).so
	objcopy -j .text -j .sdata -j .data -j .dynamic -j .dynsym -j .rel \
		-j .rela -j .reloc --target=efi-app-x86_64 --subsystem=10 $$< $$@

TEST_EXTRA += $(BUILD)/tests/$(1).efi
endef
# the trace markers around known work (t_qemu_plugin.sh); the same work
# without markers, returning (efipt.efi trace --source qemu)
$(eval $(call test_app,marker_app,tests/qemu/marker_app.c,))
$(eval $(call test_app,traced_app,tests/qemu/marker_app.c,-DTRACED_APP))
# interrupts right after RETs and indirect CALLs (t_qemu_irq_after_branch.sh)
$(eval $(call test_app,ret_app,tests/qemu/ret_app.c,))
# interrupts right after Jccs (t_qemu_irq_after_jcc.sh)
$(eval $(call test_app,jcc_app,tests/qemu/jcc_app.c,))
# #BP and #UD the firmware handles and returns from (t_qemu_exceptions.sh)
$(eval $(call test_app,exc_app,tests/qemu/exc_app.c,))
# code that changes between two calls (t_qemu_smc.sh)
$(eval $(call test_app,smc_app,tests/qemu/smc_app.c,))
# images loaded while traced, one over the other's memory (t_qemu_loads.sh)
$(eval $(call test_app,load_app,tests/qemu/load_app.c,))
$(eval $(call test_app,load_app2,tests/qemu/load_app.c,-DLOAD_APP_VARIANT))
# work on the APs through MP services (efipt.efi trace --cpus); the same,
# then ExitBootServices as an OS loader (t_qemu_guest_ebs.sh)
$(eval $(call test_app,mp_app,tests/qemu/mp_app.c,))
$(eval $(call test_app,mp_exit,tests/qemu/mp_app.c,-DMP_APP_EXIT))
# firmware without MP services: removes them, then starts efipt.efi (t_qemu_nomp.sh)
$(eval $(call test_app,nomp_app,tests/qemu/nomp_app.c,))
# a guest programming Intel PT itself, badly (tests/qemu/rtit_guest_app.c),
# or toggling TraceEn (t_qemu_guest_toggle.sh)
$(eval $(call test_app,rtit_bad,tests/qemu/rtit_guest_app.c,))
$(eval $(call test_app,rtit_noen,tests/qemu/rtit_guest_app.c,-DRTIT_NEVER_ENABLE))
$(eval $(call test_app,rtit_nodis,tests/qemu/rtit_guest_app.c,-DRTIT_NO_DISABLE))
$(eval $(call test_app,rtit_toggle,tests/qemu/rtit_guest_app.c,-DRTIT_TOGGLE))

# efipt plan's WRMSR sequences through the PT unit's rules (tests/cli/t_plan_unit.sh)
$(BUILD)/tests/ptunit_replay: tests/cli/ptunit_replay.c $(BUILD)/libefipt-host.a
	@mkdir -p $(dir $@)
	$(CC) $(HOST_CFLAGS) -MMD -MP -o $@ $< $(BUILD)/libefipt-host.a $(HOST_LIBS)
TEST_EXTRA += $(BUILD)/tests/ptunit_replay

# the timing packets without QEMU (tests/unit/test_qemu_timing.c)
$(BUILD)/tests/test_qemu_timing: tests/unit/test_qemu_timing.c $(BUILD)/host/qemu-plugin/ptgen.o \
		$(BUILD)/libefipt-host.a $(TEST_LIB_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(HOST_CFLAGS) -Itests -MMD -MP -o $@ $< $(BUILD)/host/qemu-plugin/ptgen.o \
		$(TEST_LIB_OBJ) $(BUILD)/libefipt-host.a $(TEST_LIBS)

# code changes without QEMU (tests/unit/test_qemu_codelog.c)
QCODELOG_OBJ := $(patsubst %.c,$(BUILD)/host/%.o,qemu-plugin/codemap.c qemu-plugin/codelog.c \
	qemu-plugin/outfile.c)
$(BUILD)/tests/test_qemu_codelog: tests/unit/test_qemu_codelog.c $(QCODELOG_OBJ) \
		$(BUILD)/libefipt-host.a $(TEST_LIB_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(HOST_CFLAGS) -Itests -MMD -MP -o $@ $< $(QCODELOG_OBJ) $(TEST_LIB_OBJ) \
		$(BUILD)/libefipt-host.a $(TEST_LIBS)
