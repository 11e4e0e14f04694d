#pragma once
/* libopenmpt's header only: the library is not linked but loaded with dlopen on the first module file the openmpt
 * plugin reads (OpenMPT module, OpenMPTLibrary), and every function Fermata calls goes through the table below.
 * The libraries it needs (libvorbisfile, libmpg123…) come with it. */
#include <dlfcn.h>
#include <stddef.h>
#include <libopenmpt/libopenmpt.h>

/* The soname Debian's libopenmpt-dev links: scripts/make-deb.py reads it from here. */
#define FERMATA_OPENMPT_SONAME "libopenmpt.so.0"

/* Every libopenmpt function Fermata calls or hands to it. Add one here (and only here): the table's field is a
 * pointer with the exact type of libopenmpt's own declaration. */
#define FERMATA_OPENMPT_SYMBOLS(X) \
    X(openmpt_log_func_silent) \
    X(openmpt_error_func_store) \
    X(openmpt_free_string) \
    X(openmpt_module_create_from_memory2) \
    X(openmpt_module_destroy) \
    X(openmpt_module_get_duration_seconds) \
    X(openmpt_module_get_metadata) \
    X(openmpt_module_set_repeat_count) \
    X(openmpt_module_set_render_param) \
    X(openmpt_module_ctl_set_boolean) \
    X(openmpt_module_ctl_set_text) \
    X(openmpt_module_read_interleaved_float_stereo) \
    X(openmpt_module_set_position_seconds)

/* The resolved functions of the library's one load. */
#pragma clang assume_nonnull begin
typedef struct fermata_openmpt_functions {
#define FERMATA_OPENMPT_FIELD(name) __typeof__(name) *name;
    FERMATA_OPENMPT_SYMBOLS(FERMATA_OPENMPT_FIELD)
#undef FERMATA_OPENMPT_FIELD
} fermata_openmpt_functions;
#pragma clang assume_nonnull end

/* Fills `functions` from the library's handle (dlopen's). Returns NULL, or the name of the first function not found
 * (then `functions` is partly filled and must not be used). */
static inline const char *_Nullable fermata_openmpt_resolve(
    fermata_openmpt_functions *_Nonnull functions, void *_Nonnull library) {
#define FERMATA_OPENMPT_RESOLVE(name) \
    functions->name = (__typeof__(name) *)dlsym(library, #name); \
    if (functions->name == NULL) return #name;
    FERMATA_OPENMPT_SYMBOLS(FERMATA_OPENMPT_RESOLVE)
#undef FERMATA_OPENMPT_RESOLVE
    return NULL;
}
