#pragma once
/* libshout's header only: the library is not linked but loaded with dlopen when a shout output is first enabled
 * (Shout module, ShoutLibrary), and every function Fermata calls goes through the table below. */
#include <dlfcn.h>
#include <stddef.h>
#include <shout/shout.h>

/* The soname Debian's libshout-dev links (the header carries no version): scripts/make-deb.py reads it from here. */
#define FERMATA_SHOUT_SONAME "libshout.so.3"

/* Every libshout function Fermata calls. Add a function here (and only here): the table's field gets the exact
 * type of libshout's own declaration. */
#define FERMATA_SHOUT_FUNCTIONS(X) \
    X(shout_init) \
    X(shout_new) \
    X(shout_free) \
    X(shout_get_error) \
    X(shout_set_host) \
    X(shout_set_port) \
    X(shout_set_password) \
    X(shout_set_mount) \
    X(shout_set_user) \
    X(shout_set_public) \
    X(shout_set_content_format) \
    X(shout_set_protocol) \
    X(shout_set_tls) \
    X(shout_set_agent) \
    X(shout_set_meta) \
    X(shout_set_audio_info) \
    X(shout_open) \
    X(shout_get_connected) \
    X(shout_close) \
    X(shout_send) \
    X(shout_metadata_new) \
    X(shout_metadata_add) \
    X(shout_metadata_free) \
    X(shout_set_metadata_utf8)

/* The resolved functions of the library's one load. */
#pragma clang assume_nonnull begin
typedef struct fermata_shout_functions {
#define FERMATA_SHOUT_FIELD(name) __typeof__(name) *name;
    FERMATA_SHOUT_FUNCTIONS(FERMATA_SHOUT_FIELD)
#undef FERMATA_SHOUT_FIELD
} fermata_shout_functions;
#pragma clang assume_nonnull end

/* Fills `functions` from the library's handle (dlopen's). Returns NULL, or the name of the first function not
 * found (then `functions` is partly filled and must not be used). */
static inline const char *_Nullable fermata_shout_resolve(
    fermata_shout_functions *_Nonnull functions, void *_Nonnull library) {
#define FERMATA_SHOUT_RESOLVE(name) \
    functions->name = (__typeof__(name) *)dlsym(library, #name); \
    if (functions->name == NULL) return #name;
    FERMATA_SHOUT_FUNCTIONS(FERMATA_SHOUT_RESOLVE)
#undef FERMATA_SHOUT_RESOLVE
    return NULL;
}
