#pragma once
/* libao's header only: the library is not linked but loaded with dlopen when the configuration first names an ao
 * output (AO module, AOLibrary), and every function Fermata calls goes through the table below. */
#include <dlfcn.h>
#include <stddef.h>
#include <ao/ao.h>

/* The soname Debian's libao-dev links (the header carries no version): scripts/make-deb.py reads it from here. */
#define FERMATA_AO_SONAME "libao.so.4"

/* Every libao function Fermata calls. Add a function here (and only here): the table's field gets the exact type
 * of libao's own declaration. */
#define FERMATA_AO_FUNCTIONS(X) \
    X(ao_initialize) \
    X(ao_default_driver_id) \
    X(ao_driver_id) \
    X(ao_driver_info) \
    X(ao_append_option) \
    X(ao_free_options) \
    X(ao_open_live) \
    X(ao_play) \
    X(ao_close)

/* The resolved functions of the library's one load. */
#pragma clang assume_nonnull begin
typedef struct fermata_ao_functions {
#define FERMATA_AO_FIELD(name) __typeof__(name) *name;
    FERMATA_AO_FUNCTIONS(FERMATA_AO_FIELD)
#undef FERMATA_AO_FIELD
} fermata_ao_functions;
#pragma clang assume_nonnull end

/* Fills `functions` from the library's handle (dlopen's). Returns NULL, or the name of the first function not
 * found (then `functions` is partly filled and must not be used). */
static inline const char *_Nullable fermata_ao_resolve(fermata_ao_functions *_Nonnull functions, void *_Nonnull library) {
#define FERMATA_AO_RESOLVE(name) \
    functions->name = (__typeof__(name) *)dlsym(library, #name); \
    if (functions->name == NULL) return #name;
    FERMATA_AO_FUNCTIONS(FERMATA_AO_RESOLVE)
#undef FERMATA_AO_RESOLVE
    return NULL;
}
