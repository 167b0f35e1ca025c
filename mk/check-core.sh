#!/bin/sh
# core/ is shared by firmware and host and must not depend on a C library:
# it may include only stdint.h, stddef.h, stdbool.h and core's own headers.
bad=$(grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]*<' core/*.c core/*.h 2>/dev/null |
	grep -vE '<(stdint|stddef|stdbool)\.h>')
if [ -n "$bad" ]; then
	echo "core/ includes headers outside stdint/stddef/stdbool:"
	echo "$bad"
	exit 1
fi
echo "core/ is freestanding: $(ls core/*.c | wc -l) files built with -ffreestanding -nostdlib -nostdinc"
