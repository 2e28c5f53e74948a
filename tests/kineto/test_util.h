/* Helpers shared by the views tests: scratch directories that clean up. */
#ifndef VIEWS_TEST_UTIL_H
#define VIEWS_TEST_UTIL_H

/* mkdtemp under $TMPDIR (or /tmp); returns a malloc'd path or NULL. */
char *tu_tempdir(const char *tag);

/* rm -r of a scratch directory made by tu_tempdir (two levels deep). */
void tu_rmtree(const char *dir);

/* Whole file into a NUL-terminated buffer (gzip is decompressed); NULL on error. */
char *tu_read_file(const char *path, size_t *len);

/* Write bytes to path; 0 or -1. */
int tu_write_file(const char *path, const char *data, size_t len);


/* Run a command function with stdout sent to a file; returns its exit
 * status and the output (malloc'd) in *out. */
int tu_capture(int (*cmd)(int, char **), int argc, char **argv, char **out);

/* The same for a NULL-terminated argv whose output the test does not
 * read: returns the exit status only. */
int tu_status(int (*cmd)(int, char **), char **argv);

#endif
