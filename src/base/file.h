/*
 * base/file.h (internal) - reading a whole file into memory, for the
 * loaders of text and binary inputs (scenarios, traces, workloads).
 */
#ifndef ARBOR_BASE_FILE_H
#define ARBOR_BASE_FILE_H

#include <stddef.h>

/*
 * Read the file `path` whole into a new buffer (*data, the caller frees it),
 * *len bytes followed by a NUL that *len does not count. `max`: the most
 * bytes accepted (0: no limit). Errors (errno tells why for the first
 * two): ARB_ENOENT the file cannot be opened, ARB_EIO a read failed,
 * ARB_ENOMEM out of memory or the file holds more than max bytes. On error
 * *data is NULL and *len 0.
 */
int arb_file_read(const char *path, size_t max, char **data, size_t *len);

#endif
