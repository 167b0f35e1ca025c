/*
 * UTF-8 validity, shared by every JSON and protobuf string writer: text
 * from run directories, firmware and the command line is untrusted bytes,
 * and JSON (RFC 8259, section 8.1) and protobuf strings must be UTF-8.
 */
#ifndef EFIPT_CORE_UTF8_H
#define EFIPT_CORE_UTF8_H

/* Length of the valid UTF-8 sequence of 2..4 bytes at s (a NUL ends it),
 * or 0: ASCII, overlong forms, surrogates, past U+10FFFF, cut sequences. */
static inline int utf8_seq_len(const unsigned char *s)
{
	unsigned c = s[0];
	int n = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 :
		c >= 0xf0 && c <= 0xf4 ? 4 : 0;
	for (int i = 1; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	/* overlong forms, surrogates, beyond U+10FFFF */
	if ((c == 0xe0 && s[1] < 0xa0) || (c == 0xed && s[1] >= 0xa0) ||
	    (c == 0xf0 && s[1] < 0x90) || (c == 0xf4 && s[1] >= 0x90))
		return 0;
	return n;
}

#endif
