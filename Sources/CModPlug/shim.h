#pragma once
/* libmodplug's header only: the library is not linked but loaded with dlopen on the first module file the modplug
 * plugin reads (ModPlug module, ModPlugLibrary), and every function Fermata calls goes through the table below. */
#include <dlfcn.h>
#include <stddef.h>
#include <libmodplug/modplug.h>

/* The soname Debian's libmodplug-dev links: scripts/make-deb.py reads it from here. */
#define FERMATA_MODPLUG_SONAME "libmodplug.so.1"

/* Every libmodplug function Fermata calls. Add one here (and only here): the table's field is a pointer with the
 * exact type of libmodplug's own declaration. */
#define FERMATA_MODPLUG_SYMBOLS(X) \
    X(ModPlug_GetSettings) \
    X(ModPlug_SetSettings) \
    X(ModPlug_Load) \
    X(ModPlug_Unload) \
    X(ModPlug_GetName) \
    X(ModPlug_GetLength) \
    X(ModPlug_Read) \
    X(ModPlug_Seek)

/* The resolved functions of the library's one load. */
#pragma clang assume_nonnull begin
typedef struct fermata_modplug_functions {
#define FERMATA_MODPLUG_FIELD(name) __typeof__(name) *name;
    FERMATA_MODPLUG_SYMBOLS(FERMATA_MODPLUG_FIELD)
#undef FERMATA_MODPLUG_FIELD
} fermata_modplug_functions;
#pragma clang assume_nonnull end

/* Fills `functions` from the library's handle (dlopen's). Returns NULL, or the name of the first function not found
 * (then `functions` is partly filled and must not be used). */
static inline const char *_Nullable fermata_modplug_resolve(
    fermata_modplug_functions *_Nonnull functions, void *_Nonnull library) {
#define FERMATA_MODPLUG_RESOLVE(name) \
    functions->name = (__typeof__(name) *)dlsym(library, #name); \
    if (functions->name == NULL) return #name;
    FERMATA_MODPLUG_SYMBOLS(FERMATA_MODPLUG_RESOLVE)
#undef FERMATA_MODPLUG_RESOLVE
    return NULL;
}
