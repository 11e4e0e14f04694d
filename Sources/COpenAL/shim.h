#pragma once
/* OpenAL's headers only: libopenal is not linked but loaded with dlopen when an openal output is first enabled
 * (OpenAL module, OpenALLibrary), and every function Fermata calls goes through the table below. */
#include <dlfcn.h>
#include <stddef.h>
#include <AL/al.h>
#include <AL/alc.h>

/* The soname Debian's libopenal-dev links (the headers carry no version): scripts/make-deb.py reads it from here. */
#define FERMATA_OPENAL_SONAME "libopenal.so.1"

/* Every OpenAL function Fermata calls. Add a function here (and only here): the table's field gets the exact type
 * of OpenAL's own declaration. */
#define FERMATA_OPENAL_FUNCTIONS(X) \
    X(alcGetString) \
    X(alcOpenDevice) \
    X(alcCloseDevice) \
    X(alcCreateContext) \
    X(alcDestroyContext) \
    X(alcMakeContextCurrent) \
    X(alcGetCurrentContext) \
    X(alGetError) \
    X(alGenBuffers) \
    X(alDeleteBuffers) \
    X(alGenSources) \
    X(alDeleteSources) \
    X(alGetSourcei) \
    X(alSourcei) \
    X(alBufferData) \
    X(alSourceQueueBuffers) \
    X(alSourceUnqueueBuffers) \
    X(alSourcePlay) \
    X(alSourceStop)

/* The resolved functions of the library's one load. */
#pragma clang assume_nonnull begin
typedef struct fermata_openal_functions {
#define FERMATA_OPENAL_FIELD(name) __typeof__(name) *name;
    FERMATA_OPENAL_FUNCTIONS(FERMATA_OPENAL_FIELD)
#undef FERMATA_OPENAL_FIELD
} fermata_openal_functions;
#pragma clang assume_nonnull end

/* Fills `functions` from the library's handle (dlopen's). Returns NULL, or the name of the first function not
 * found (then `functions` is partly filled and must not be used). */
static inline const char *_Nullable fermata_openal_resolve(
    fermata_openal_functions *_Nonnull functions, void *_Nonnull library) {
#define FERMATA_OPENAL_RESOLVE(name) \
    functions->name = (__typeof__(name) *)dlsym(library, #name); \
    if (functions->name == NULL) return #name;
    FERMATA_OPENAL_FUNCTIONS(FERMATA_OPENAL_RESOLVE)
#undef FERMATA_OPENAL_RESOLVE
    return NULL;
}
