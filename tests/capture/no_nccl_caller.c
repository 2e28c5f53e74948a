/* Calls ncclAllReduce in a process with no NCCL library: the preload's
 * wrapper is then the only definition (found with dlsym, as nothing here
 * links NCCL).  It must answer ncclSystemError, keep errno and not crash.
 * Exit 0 when that holds; without the preload there is nothing to call. */
#include <dlfcn.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>

typedef int (*allreduce_fn)(const void *, void *, size_t, int, int, void *, void *);

int main(void)
{
    allreduce_fn f = (allreduce_fn)dlsym(RTLD_DEFAULT, "ncclAllReduce");
    if (!f) {
        fprintf(stderr, "no ncclAllReduce at all (run me under the preload)\n");
        return 3;
    }
    errno = 1234;
    int rc = f(NULL, NULL, 1, 7, 0, NULL, NULL);
    if (rc != 2 || errno != 1234) {
        fprintf(stderr, "rc %d errno %d\n", rc, errno);
        return 1;
    }
    rc = f(NULL, NULL, 1, 7, 0, NULL, NULL); /* second call: no second warning */
    return rc == 2 ? 0 : 1;
}
