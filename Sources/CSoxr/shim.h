#pragma once
/* libsoxr's header only: the library is not linked but loaded with dlopen on the first resampling with the soxr
 * resampler (Soxr module, SoxrLibrary), and every function Fermata calls goes through the table below. Its
 * OpenMP runtime (libgomp) comes with it. */
#include <dlfcn.h>
#include <stddef.h>
#include <soxr.h>

/* The soname Debian's libsoxr-dev links: scripts/make-deb.py reads it from here. */
#define FERMATA_SOXR_SONAME "libsoxr.so.0"

/* Every libsoxr function Fermata calls. Add one here (and only here): the table's field is a pointer with the
 * exact type of libsoxr's own declaration. */
#define FERMATA_SOXR_SYMBOLS(X) \
    X(soxr_io_spec) \
    X(soxr_quality_spec) \
    X(soxr_runtime_spec) \
    X(soxr_create) \
    X(soxr_process) \
    X(soxr_clear) \
    X(soxr_delete)

/* The resolved functions of the library's one load. */
#pragma clang assume_nonnull begin
typedef struct fermata_soxr_functions {
#define FERMATA_SOXR_FIELD(name) __typeof__(name) *name;
    FERMATA_SOXR_SYMBOLS(FERMATA_SOXR_FIELD)
#undef FERMATA_SOXR_FIELD
} fermata_soxr_functions;
#pragma clang assume_nonnull end

/* Fills `functions` from the library's handle (dlopen's). Returns NULL, or the name of the first function not found
 * (then `functions` is partly filled and must not be used). */
static inline const char *_Nullable fermata_soxr_resolve(
    fermata_soxr_functions *_Nonnull functions, void *_Nonnull library) {
#define FERMATA_SOXR_RESOLVE(name) \
    functions->name = (__typeof__(name) *)dlsym(library, #name); \
    if (functions->name == NULL) return #name;
    FERMATA_SOXR_SYMBOLS(FERMATA_SOXR_RESOLVE)
#undef FERMATA_SOXR_RESOLVE
    return NULL;
}
