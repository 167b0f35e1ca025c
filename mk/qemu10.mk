# QEMU 10.0 (plugin API 4) beside the system's QEMU 7.2 (API 1), for a
# second run of the QEMU tests that exercise the plugins (tests/run.sh):
# Debian's bookworm-backports build unpacked from its .deb files into
# build/qemu10 (mk/qemu-prefix.sh; the system QEMU is untouched), its
# qemu-plugin.h from its source package, and both plugins built for it.
#   make qemu10        build/qemu10/bin/qemu-system-x86_64, build/qemu10/efipt-qemu.so,
#                      build/qemu10/tests/insnlog.so, then build/qemu10/ready
#   make test          does that where the system QEMU's plugin API is older
#                      than 4 (Debian 12); a system with QEMU 10 already runs
#                      the suite against it once. Without the network the
#                      second run is skipped with a note.
QEMU10 := $(BUILD)/qemu10
QEMU10_SUITE ?= bookworm-backports

.PHONY: qemu10 qemu10-if-useful
qemu10: | $(DEPS_STAMP)
	@rm -f $(QEMU10)/ready
	sh mk/qemu-prefix.sh $(QEMU10) $(QEMU10_SUITE)
	sh qemu-plugin/get-plugin-header.sh $(QEMU10)/api "$$(cat $(QEMU10)/version)"
	@$(MAKE) --no-print-directory qemu-plugin QPLUG_DIR=$(QEMU10)/api QPLUG_BUILD=$(QEMU10) \
		QPLUG_VERSION="$$(cat $(QEMU10)/version)"
	@touch $(QEMU10)/ready

# after qemu-plugin-if-possible: only where the first run is not QEMU 10's
qemu10-if-useful: qemu-plugin-if-possible
	@v=$$(sed -n 's/^#define QEMU_PLUGIN_VERSION \([0-9]*\).*/\1/p' \
		$(QPLUG_DIR)/qemu/qemu-plugin.h 2>/dev/null); \
	if [ -z "$$v" ] || [ "$$v" -ge 4 ]; then \
		rm -f $(QEMU10)/ready; \
	elif ! $(MAKE) --no-print-directory qemu10; then \
		echo "note: QEMU 10.0 from $(QEMU10_SUITE) not set up (see above): the second run of the plugin tests is skipped"; \
	fi

TEST_EXTRA += qemu10-if-useful
