/* load_now [+]PATH...: dlopen each shared object with RTLD_NOW, as `ctypes.CDLL(path,
 * mode=os.RTLD_NOW)` or a host built with -z now would: every undefined symbol must resolve at
 * load. A leading '+' loads that object RTLD_GLOBAL first (the host library a plugin runs
 * inside, e.g. libslurmfull.so for a SPANK plugin). Exit 1 if any load fails. */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char** argv) {
    int failed = 0;
    for (int i = 1; i < argc; ++i) {
        const int global = argv[i][0] == '+';
        const char* path = argv[i] + global;
        void* handle = dlopen(path, RTLD_NOW | (global ? RTLD_GLOBAL : RTLD_LOCAL));
        if (handle == NULL) {
            printf("FAIL: %s\n", dlerror());
            failed = 1;
        } else {
            printf("ok: %s loads with RTLD_NOW\n", path);
        }
    }
    return failed;
}
