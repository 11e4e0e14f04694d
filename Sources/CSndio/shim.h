#pragma once
/* libsndio's header only: the library is not linked but loaded with dlopen when a sndio output is first enabled
 * (Sndio module, SndioLibrary), and every function Fermata calls goes through the table below. */
#include <dlfcn.h>
#include <stddef.h>
#include <sndio.h>

/* The soname Debian's libsndio-dev links (the header carries no version): scripts/make-deb.py reads it from here. */
#define FERMATA_SNDIO_SONAME "libsndio.so.7"

/* The device name that means "the default device" (AUDIODEVICE, else snd/default, else rsnd/0), as a constant
 * Swift sees whatever the header makes of it. */
static const char *const fermata_sndio_devany = SIO_DEVANY;
/* sndio.h's byte order for native samples (a macro chosen by #if). */
static const unsigned int fermata_sndio_le_native = SIO_LE_NATIVE;

/* Every libsndio function Fermata calls. Add a function here (and only here): the table's field gets the exact
 * type of libsndio's own declaration. */
#define FERMATA_SNDIO_FUNCTIONS(X) \
    X(sio_initpar) \
    X(sio_open) \
    X(sio_close) \
    X(sio_setpar) \
    X(sio_getpar) \
    X(sio_start) \
    X(sio_stop) \
    X(sio_flush) \
    X(sio_write) \
    X(sio_eof) \
    X(sio_setvol) \
    X(sio_onvol) \
    X(sio_onmove)

/* The resolved functions of the library's one load. */
#pragma clang assume_nonnull begin
typedef struct fermata_sndio_functions {
#define FERMATA_SNDIO_FIELD(name) __typeof__(name) *name;
    FERMATA_SNDIO_FUNCTIONS(FERMATA_SNDIO_FIELD)
#undef FERMATA_SNDIO_FIELD
} fermata_sndio_functions;
#pragma clang assume_nonnull end

/* Fills `functions` from the library's handle (dlopen's). Returns NULL, or the name of the first function not
 * found (then `functions` is partly filled and must not be used). */
static inline const char *_Nullable fermata_sndio_resolve(
    fermata_sndio_functions *_Nonnull functions, void *_Nonnull library) {
#define FERMATA_SNDIO_RESOLVE(name) \
    functions->name = (__typeof__(name) *)dlsym(library, #name); \
    if (functions->name == NULL) return #name;
    FERMATA_SNDIO_FUNCTIONS(FERMATA_SNDIO_RESOLVE)
#undef FERMATA_SNDIO_RESOLVE
    return NULL;
}
