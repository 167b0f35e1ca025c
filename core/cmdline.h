/*
 * Command-line splitting for efipt.efi, whose arguments arrive as one string
 * (UEFI Shell LoadOptions, or the efipt.args file). Words are separated by
 * blanks; "double quotes" group words; a backslash escapes the next
 * character inside quotes. '#' at the start of a word begins a comment that
 * runs to the end of the line (so efipt.args can be annotated).
 */
#ifndef EFIPT_CORE_CMDLINE_H
#define EFIPT_CORE_CMDLINE_H

#include <stddef.h>

enum cmdline_err {
	CMDLINE_OK = 0,
	CMDLINE_TOO_MANY = -1,   /* more words than max_argv */
	CMDLINE_UNTERMINATED = -2, /* a quote is not closed */
	CMDLINE_TOO_LONG = -3,   /* the command line does not fit */
	CMDLINE_NOT_ASCII = -4,  /* a byte outside printable ASCII, not in a comment */
};

/*
 * Split buf (NUL-terminated, modified in place) into argv. Returns the word
 * count, or a negative cmdline_err. argv[count] is set to NULL if room.
 */
int cmdline_split(char *buf, char **argv, int max_argv);

/*
 * The command line a text (efipt.args) holds, as one line: comments dropped,
 * line breaks and runs of blanks outside quotes made one space, no blanks at
 * either end. Writes dst (cap bytes, NUL-terminated) and returns its length;
 * CMDLINE_TOO_LONG if it needs more than cap - 1 bytes; CMDLINE_NOT_ASCII
 * (*bad = offset in src) for a control or non-ASCII byte outside a comment.
 * Comments do not count against cap and may hold any byte but a line break.
 */
int cmdline_uncomment(const char *src, size_t len, char *dst, size_t cap, size_t *bad);

/*
 * Which of words[0..n) (n <= 32) stand as words in raw bytes that are not a
 * usable command line: bit i set for words[i]. Reads every step-th byte from
 * first (2 for UTF-16), skips '#' comments, stops at a "--" word; quotes are
 * not parsed. For the options a rig relies on (--shutdown) when the rest is
 * refused.
 */
unsigned cmdline_salvage(const char *raw, size_t len, size_t first, size_t step,
			 const char *const *words, unsigned n);

/* Does s look like an EFI image path ("...\efipt.efi", case-insensitive)? */
int cmdline_is_image_name(const char *s);

#endif
