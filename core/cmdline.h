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
};

/*
 * Split buf (NUL-terminated, modified in place) into argv. Returns the word
 * count, or a negative cmdline_err. argv[count] is set to NULL if room.
 */
int cmdline_split(char *buf, char **argv, int max_argv);

/* Does s look like an EFI image path ("...\efipt.efi", case-insensitive)? */
int cmdline_is_image_name(const char *s);

#endif
