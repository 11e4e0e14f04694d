#pragma once
/* libfluidsynth's header only: the library is not linked but loaded with dlopen on first use (FluidSynth module,
 * FluidSynthLibrary), and every function Fermata calls goes through the table below. */
#include <dlfcn.h>
#include <stddef.h>
#include <fluidsynth.h>

/* The soname Debian's libfluidsynth-dev links (the header's version is the package's, 2.x, not the soname's):
 * scripts/make-deb.py reads it from here. */
#define FERMATA_FLUIDSYNTH_SONAME "libfluidsynth.so.3"

/* Every libfluidsynth function Fermata calls. Add a function here (and only here): the table's field gets the
 * exact type of libfluidsynth's own declaration. */
#define FERMATA_FLUIDSYNTH_FUNCTIONS(X) \
    X(fluid_is_midifile) \
    X(new_fluid_settings) \
    X(delete_fluid_settings) \
    X(fluid_settings_setnum) \
    X(new_fluid_synth) \
    X(delete_fluid_synth) \
    X(fluid_synth_sfload) \
    X(fluid_synth_write_s16) \
    X(new_fluid_player) \
    X(delete_fluid_player) \
    X(fluid_player_add_mem) \
    X(fluid_player_play) \
    X(fluid_player_stop) \
    X(fluid_player_join) \
    X(fluid_player_get_status)

/* The resolved functions of the library's one load. */
#pragma clang assume_nonnull begin
typedef struct fermata_fluidsynth_functions {
#define FERMATA_FLUIDSYNTH_FIELD(name) __typeof__(name) *name;
    FERMATA_FLUIDSYNTH_FUNCTIONS(FERMATA_FLUIDSYNTH_FIELD)
#undef FERMATA_FLUIDSYNTH_FIELD
} fermata_fluidsynth_functions;
#pragma clang assume_nonnull end

/* Fills `functions` from the library's handle (dlopen's). Returns NULL, or the name of the first function not
 * found (then `functions` is partly filled and must not be used). */
static inline const char *_Nullable fermata_fluidsynth_resolve(
    fermata_fluidsynth_functions *_Nonnull functions, void *_Nonnull library) {
#define FERMATA_FLUIDSYNTH_RESOLVE(name) \
    functions->name = (__typeof__(name) *)dlsym(library, #name); \
    if (functions->name == NULL) return #name;
    FERMATA_FLUIDSYNTH_FUNCTIONS(FERMATA_FLUIDSYNTH_RESOLVE)
#undef FERMATA_FLUIDSYNTH_RESOLVE
    return NULL;
}
