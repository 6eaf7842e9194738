/* The thread-local last error, status names, versions, growable arrays and file checks. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "internal.h"

#if defined(_MSC_VER)
#define SA_THREAD_LOCAL __declspec(thread)
#else
#define SA_THREAD_LOCAL _Thread_local
#endif

static SA_THREAD_LOCAL char last_error[1024];

speechattn_status sa_fail(speechattn_status status, const char *format, ...) {
    va_list args;
    va_start(args, format);
    vsnprintf(last_error, sizeof last_error, format, args);
    va_end(args);
    for (char *c = last_error; *c; c++) /* one line */
        if (*c == '\n' || *c == '\r') *c = ' ';
    return status;
}

const char *speechattn_last_error(void) { return last_error; }

const char *speechattn_status_name(speechattn_status status) {
    switch (status) {
    case SPEECHATTN_OK: return "SPEECHATTN_OK";
    case SPEECHATTN_ERR_INVALID_ARGUMENT: return "SPEECHATTN_ERR_INVALID_ARGUMENT";
    case SPEECHATTN_ERR_FILE: return "SPEECHATTN_ERR_FILE";
    case SPEECHATTN_ERR_MODEL: return "SPEECHATTN_ERR_MODEL";
    case SPEECHATTN_ERR_AUDIO: return "SPEECHATTN_ERR_AUDIO";
    case SPEECHATTN_ERR_STATE: return "SPEECHATTN_ERR_STATE";
    case SPEECHATTN_ERR_RUNTIME: return "SPEECHATTN_ERR_RUNTIME";
    case SPEECHATTN_ERR_OUT_OF_MEMORY: return "SPEECHATTN_ERR_OUT_OF_MEMORY";
    case SPEECHATTN_ERR_BUFFER_TOO_SMALL: return "SPEECHATTN_ERR_BUFFER_TOO_SMALL";
    }
    return "SPEECHATTN_ERR_UNKNOWN";
}

#define SA_STR2(x) #x
#define SA_STR(x) SA_STR2(x)
const char *speechattn_version(void) {
    return SA_STR(SPEECHATTN_VERSION_MAJOR) "." SA_STR(SPEECHATTN_VERSION_MINOR) "." SA_STR(SPEECHATTN_VERSION_PATCH);
}
int32_t speechattn_abi_version(void) { return SPEECHATTN_ABI_VERSION; }
const char *speechattn_contract_version(void) { return "2"; }

int sa_reserve_(void **data, int64_t *capacity, int64_t needed, size_t item) {
    if (needed <= *capacity) return 0;
    int64_t wanted = *capacity ? *capacity : 16;
    while (wanted < needed) wanted *= 2;
    if ((uint64_t)wanted > SIZE_MAX / item) return -1;
    void *grown = realloc(*data, (size_t)wanted * item);
    if (!grown) return -1;
    *data = grown;
    *capacity = wanted;
    return 0;
}

speechattn_status sa_check_file(const char *path, const char *what) {
    struct stat info;
    if (!path) return sa_fail(SPEECHATTN_ERR_INVALID_ARGUMENT, "the %s path is NULL", what);
    if (stat(path, &info) != 0) {
        if (errno == ENOENT) return sa_fail(SPEECHATTN_ERR_FILE, "%s: no such %s file", path, what);
        return sa_fail(SPEECHATTN_ERR_FILE, "%.60s: cannot read the %s (%s)", path, what, strerror(errno));
    }
    if (S_ISDIR(info.st_mode)) return sa_fail(SPEECHATTN_ERR_FILE, "%s: a directory, not a %s file", path, what);
    if (!S_ISREG(info.st_mode)) {
        const char *kind = S_ISFIFO(info.st_mode) ? "a pipe" : "a device";
#ifdef S_ISSOCK
        if (S_ISSOCK(info.st_mode)) kind = "a pipe";
#endif
        return sa_fail(SPEECHATTN_ERR_FILE, "%s: %s, not a file; give the %s as a file", path, kind, what);
    }
    return SPEECHATTN_OK;
}

speechattn_status sa_read_file(const char *path, const char *what, int64_t max_bytes, char **data, int64_t *size) {
    speechattn_status status = sa_check_file(path, what);
    if (status) return status;
    FILE *file = fopen(path, "rb");
    if (!file) return sa_fail(SPEECHATTN_ERR_FILE, "%s: cannot read the %s (%s)", path, what, strerror(errno));
    char *buffer = malloc((size_t)max_bytes + 2);
    if (!buffer) {
        fclose(file);
        return sa_fail(SPEECHATTN_ERR_OUT_OF_MEMORY, "out of memory reading %s", path);
    }
    size_t got = fread(buffer, 1, (size_t)max_bytes + 1, file);
    int failed = ferror(file);
    fclose(file);
    if (failed) {
        free(buffer);
        return sa_fail(SPEECHATTN_ERR_FILE, "%s: cannot read the %s", path, what);
    }
    if ((int64_t)got > max_bytes) {
        free(buffer);
        return sa_fail(SPEECHATTN_ERR_FILE, "%s: more than %g MB; not a %s", path, max_bytes / 1e6, what);
    }
    buffer[got] = 0;
    *data = buffer;
    *size = (int64_t)got;
    return SPEECHATTN_OK;
}
