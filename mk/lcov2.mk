# lcov 2 (Debian 13's, which checks a tracefile's consistency) beside the
# system's lcov, for the lcov tests (tests/cli/t_coverage_lcov*.sh): its
# genhtml must render efipt's tracefiles too. Unpacked from Debian's .deb
# into build/lcov2 (mk/lcov2-prefix.sh; the system lcov is untouched); the
# Perl modules it needs beyond lcov 1's are Debian packages of this system.
#   make lcov2         build/lcov2/bin/genhtml and build/lcov2/bin/lcov
#   make test          does that first; without Debian's archive it says so
#                      in one line and the lcov tests check with lcov 1 only.
LCOV2 := build/lcov2
LCOV2_SUITE ?= trixie
LCOV2_PERL := libcapture-tiny-perl libdatetime-perl libtimedate-perl libjson-perl \
	libperlio-gzip-perl

.PHONY: lcov2 lcov2-if-possible
lcov2: | $(DEPS_STAMP)
	@sh mk/deps.sh $(LCOV2_PERL)
	@sh mk/lcov2-prefix.sh $(LCOV2) $(LCOV2_SUITE)

lcov2-if-possible: | $(DEPS_STAMP)
	@if ! msg=$$($(MAKE) --no-print-directory lcov2 2>&1); then \
		echo "note: lcov 2 from Debian $(LCOV2_SUITE) not set up, the lcov tests check lcov 1 only: $$(echo "$$msg" | grep -v "^make" | tail -n 1)"; \
	fi

TEST_EXTRA += lcov2-if-possible
