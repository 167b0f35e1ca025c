/* Host file helpers shared by the CLI commands. */
#ifndef EFIPT_HOST_FILE_IO_H
#define EFIPT_HOST_FILE_IO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "core/utf8.h"

/*
 * Read a whole (small) file, up to max bytes, into a malloc'd buffer with a
 * NUL appended. On failure prints "efipt CMD: PATH: reason" to stderr
 * ("efipt: ..." when cmd is NULL) and returns NULL.
 */
char *read_small_file(const char *cmd, const char *path, size_t max, size_t *len);

/*
 * Open an input that must be a regular file, for reading. A directory, FIFO
 * or device is refused with a message saying so (and a FIFO never blocks):
 * returns the descriptor, or -1 with "PATH: reason" in err.
 */
int open_regular(const char *path, char *err, size_t errlen);

/*
 * A whole input file in memory: mmap'd when it is a regular file, read
 * (at most max bytes) when it is a pipe; "-" is standard input.
 */
struct input_map {
	const unsigned char *data;
	size_t size;
	void *map;		/* mmap'd, or NULL */
	size_t released;	/* bytes of map given back (input_release()) */
	unsigned char *heap;	/* read, or NULL */
};
/* Returns 0, or -1 with "PATH: reason" in err. */
int input_map(struct input_map *m, const char *path, size_t max, char *err, size_t errlen);
void input_unmap(struct input_map *m);
/* The reader is past offset and never goes back: a mapped file's pages
 * before it go back to the kernel (read again if touched), so that a long
 * input read front to back takes no more memory than its last stretch. */
void input_release(struct input_map *m, size_t offset);
/*
 * Hand each of files[0..n) (at most 4 GiB each) to read(), in order, until
 * one fails. Returns 0; 2 when a file cannot be read ("CMD: PATH: reason");
 * 1 when read() refused its contents ("CMD: PATH: what read() said").
 */
int input_each(const char *cmd, const char *const *files, unsigned n,
	       int (*read)(void *ctx, const unsigned char *d, size_t size, char *err,
			   size_t errlen),
	       void *ctx);

struct cpuid_set;
/*
 * Read a `cpuid -r -1` dump (CPU block cpu) into set. On failure prints
 * "efipt CMD: FILE:LINE: reason" to stderr and returns -1.
 */
int read_cpuid_file(const char *cmd, const char *path, unsigned cpu, struct cpuid_set *set);

/* Parse an unsigned number (decimal, or hex with 0x; never octal: 010 is
 * ten): digits only, no sign or blanks, at most 2^64 - 1. Returns 0 on
 * success. */
int parse_u64(const char *s, unsigned long long *v);

/*
 * Flush and close standard output after a command ran. A write that failed
 * at any point (full disk, /dev/full) is reported as "efipt CMD: write error
 * on standard output: reason" and turns the exit status rc into 2.
 */
int finish_stdout(const char *cmd, int rc);
/* fflush(stdout) whose failure finish_stdout() will report with its cause. */
void flush_stdout(void);

/*
 * CMD in the messages below names the command, with or without "efipt "
 * ("coverage", "efipt coverage"): they begin "efipt coverage: " either way.
 *
 * A file written under a temporary name in its directory and renamed over
 * PATH only when everything was written: a failed or interrupted command
 * never leaves a partial or empty file under the real name. Written in
 * place instead: a PATH that exists and is not a regular file (/dev/null, a
 * FIFO, a terminal), and a stream's name (under /dev/ or /proc/, or a link
 * there: /dev/stdout with standard output redirected to a file), which a
 * rename would replace rather than write. A symbolic link to a file stays:
 * the file it leads to is the one replaced.
 */
struct atomic_file {
	FILE *f;
	int err;		/* errno of the first failed atomic_write() */
	char path[4096];	/* as given (messages) */
	char dest[4096];	/* what the rename replaces: path, links resolved */
	char tmp[4112];
};
/* Create the temporary file. On failure prints "efipt CMD: PATH: reason". */
int atomic_open(struct atomic_file *af, const char *cmd, const char *path);
/* fwrite to af->f that keeps the cause of a failure for atomic_commit(). */
void atomic_write(struct atomic_file *af, const void *p, size_t n);
/* Flush, close and rename into place; on any error print it, remove the
 * temporary file and return -1. */
int atomic_commit(struct atomic_file *af, const char *cmd);
/* Give up: close and remove the temporary file (af->f may be NULL). */
void atomic_abort(struct atomic_file *af);

/* path and everything under it, links not followed (as rm -rf): 0, or -1
 * when anything is left. */
int remove_tree(const char *path);

/*
 * Strings from a run directory (command line, image and file names) may hold
 * terminal escape sequences. Both show control characters (C0, DEL, C1) and
 * invalid UTF-8 as \n, \xNN, \u00NN, so that they reach the terminal as
 * text. fputs_safe_text writes preformatted text (newlines and tabs kept);
 * term_safe returns an escaped copy of one string (one of 8 rotating static
 * buffers, cut at 4 KiB) for use in printf arguments.
 */
void fputs_safe_text(const char *s, FILE *f);
const char *term_safe(const char *s);

#endif
