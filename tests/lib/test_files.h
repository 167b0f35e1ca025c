/*
 * Files the tests make: small fixtures written whole (a failed write is
 * the caller's to check), directories made without a shell (removed by
 * host/util/file_io.h's remove_tree()).
 */
#ifndef EFIPT_TESTS_TEST_FILES_H
#define EFIPT_TESTS_TEST_FILES_H

#include <stddef.h>

/* data[0..n) as the file dir/name (dir NULL: name is the path): 0, or -1
 * (errno says why) when it could not be written whole. */
int tf_write(const char *dir, const char *name, const void *data, size_t n);
/* The text as the file dir/name: tf_write() of its bytes. */
int tf_write_text(const char *dir, const char *name, const char *text);
/* path and every directory above it that is missing (as mkdir -p): 0 or -1. */
int tf_mkdirs(const char *path);

#endif
