# The README's two commands on other Debian releases than the build host's.
#   make check-debian13   make run and make test in a fresh Debian 13 root
#                         (debootstrap, chroot; needs root and Debian's
#                         archive; mk/check-debian13.sh). Not part of make
#                         test: it takes about as long as make test twice.
.PHONY: check-debian13
check-debian13:
	@DEPS_LOG=$(BUILD)/deps.log sh mk/deps.sh debootstrap
	sh mk/check-debian13.sh $(BUILD)/debian13
