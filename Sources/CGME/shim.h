#pragma once
/* libgme's header only: the library is not linked but loaded with dlopen on the first file the gme plugin reads
 * (GME module, GMELibrary), and every function Fermata calls goes through the table below. */
#include <dlfcn.h>
#include <stddef.h>
#include <gme/gme.h>

/* The soname Debian's libgme-dev links: scripts/make-deb.py reads it from here. */
#define FERMATA_GME_SONAME "libgme.so.0"

/* Every libgme function Fermata calls. Add one here (and only here): the table's field is a pointer with the exact
 * type of libgme's own declaration. */
#define FERMATA_GME_SYMBOLS(X) \
    X(gme_identify_extension) \
    X(gme_identify_header) \
    X(gme_new_emu) \
    X(gme_load_data) \
    X(gme_delete) \
    X(gme_type) \
    X(gme_type_system) \
    X(gme_load_m3u_data) \
    X(gme_track_count) \
    X(gme_track_info) \
    X(gme_free_info) \
    X(gme_start_track) \
    X(gme_enable_accuracy) \
    X(gme_set_fade) \
    X(gme_play) \
    X(gme_track_ended) \
    X(gme_tell) \
    X(gme_seek)

/* The resolved functions of the library's one load. */
#pragma clang assume_nonnull begin
typedef struct fermata_gme_functions {
#define FERMATA_GME_FIELD(name) __typeof__(name) *name;
    FERMATA_GME_SYMBOLS(FERMATA_GME_FIELD)
#undef FERMATA_GME_FIELD
} fermata_gme_functions;
#pragma clang assume_nonnull end

/* Fills `functions` from the library's handle (dlopen's). Returns NULL, or the name of the first function not found
 * (then `functions` is partly filled and must not be used). */
static inline const char *_Nullable fermata_gme_resolve(fermata_gme_functions *_Nonnull functions, void *_Nonnull library) {
#define FERMATA_GME_RESOLVE(name) \
    functions->name = (__typeof__(name) *)dlsym(library, #name); \
    if (functions->name == NULL) return #name;
    FERMATA_GME_SYMBOLS(FERMATA_GME_RESOLVE)
#undef FERMATA_GME_RESOLVE
    return NULL;
}
