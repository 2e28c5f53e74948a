/* tsc-testbed-nonccl: a process that never links NCCL, like the launcher's
 * helpers or a DataLoader worker.  With a path argument it tries to dlopen
 * it (a missing file models a job whose NCCL cannot be loaded).  Under the
 * preload it must run normally and leave no dump. */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    volatile unsigned long long acc = 0;
    for (unsigned long long i = 0; i < 2000000ull; i++)
        acc += i * i;
    if (argc > 1) {
        void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
        if (h) {
            printf("loaded %s\n", argv[1]);
            dlclose(h);
        } else {
            printf("dlopen failed as expected\n");
        }
    }
    printf("nonccl ok %llu\n", (unsigned long long)acc);
    return 0;
}
