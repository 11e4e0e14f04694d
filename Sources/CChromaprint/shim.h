#pragma once
/* libchromaprint's header only: the library is not linked but loaded with dlopen on the first fingerprint
 * (Chromaprint module, ChromaprintLibrary), and every function Fermata calls goes through the table below. */
#include <dlfcn.h>
#include <stddef.h>
#include <chromaprint.h>

/* Every libchromaprint function Fermata calls. Add a function here (and only here): the table's field gets the
 * exact type of libchromaprint's own declaration. */
#define FERMATA_CHROMAPRINT_FUNCTIONS(X) \
    X(chromaprint_get_version) \
    X(chromaprint_new) \
    X(chromaprint_free) \
    X(chromaprint_start) \
    X(chromaprint_feed) \
    X(chromaprint_finish) \
    X(chromaprint_get_fingerprint) \
    X(chromaprint_get_raw_fingerprint) \
    X(chromaprint_dealloc)

/* The resolved functions of one load of the library; valid while it is loaded. */
#pragma clang assume_nonnull begin
typedef struct fermata_chromaprint_functions {
#define FERMATA_CHROMAPRINT_FIELD(name) __typeof__(name) *name;
    FERMATA_CHROMAPRINT_FUNCTIONS(FERMATA_CHROMAPRINT_FIELD)
#undef FERMATA_CHROMAPRINT_FIELD
} fermata_chromaprint_functions;
#pragma clang assume_nonnull end

/* Fills `functions` from the library's handle (dlopen's). Returns NULL, or the name of the first function not
 * found (then `functions` is partly filled and must not be used). */
static inline const char *_Nullable fermata_chromaprint_resolve(
    fermata_chromaprint_functions *_Nonnull functions, void *_Nonnull library) {
#define FERMATA_CHROMAPRINT_RESOLVE(name) \
    functions->name = (__typeof__(name) *)dlsym(library, #name); \
    if (functions->name == NULL) return #name;
    FERMATA_CHROMAPRINT_FUNCTIONS(FERMATA_CHROMAPRINT_RESOLVE)
#undef FERMATA_CHROMAPRINT_RESOLVE
    return NULL;
}
