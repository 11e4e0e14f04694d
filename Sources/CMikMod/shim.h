#pragma once
/* libmikmod's header only: the library is not linked but loaded with dlopen on first use (MikMod module,
 * MikModLibrary), and every function and variable Fermata uses goes through the table below. */
#include <dlfcn.h>
#include <stddef.h>
#include <mikmod.h>

/* The soname Debian's libmikmod-dev links: scripts/make-deb.py reads it from here. */
#define FERMATA_MIKMOD_SONAME "libmikmod.so.3"

/* Every libmikmod function Fermata calls, and the settings (global variables) it writes. Add one here (and only
 * here): the table's field is a pointer with the exact type of libmikmod's own declaration. */
#define FERMATA_MIKMOD_SYMBOLS(X) \
    X(MikMod_RegisterDriver) \
    X(MikMod_RegisterAllLoaders) \
    X(MikMod_Init) \
    X(MikMod_Reset) \
    X(MikMod_strerror) \
    X(MikMod_free) \
    X(MikMod_errno) \
    X(md_device) \
    X(md_reverb) \
    X(md_pansep) \
    X(md_mixfreq) \
    X(md_mode) \
    X(Player_LoadMem) \
    X(Player_LoadTitleMem) \
    X(Player_Free) \
    X(Player_Start) \
    X(Player_GetModule) \
    X(Player_Active) \
    X(VC_WriteBytes) \
    X(VC_SampleLoad) \
    X(VC_SampleUnload) \
    X(VC_SampleSpace) \
    X(VC_SampleLength) \
    X(VC_Init) \
    X(VC_Exit) \
    X(VC_SetNumVoices) \
    X(VC_PlayStart) \
    X(VC_PlayStop) \
    X(VC_VoiceSetVolume) \
    X(VC_VoiceGetVolume) \
    X(VC_VoiceSetFrequency) \
    X(VC_VoiceGetFrequency) \
    X(VC_VoiceSetPanning) \
    X(VC_VoiceGetPanning) \
    X(VC_VoicePlay) \
    X(VC_VoiceStop) \
    X(VC_VoiceStopped) \
    X(VC_VoiceGetPosition) \
    X(VC_VoiceRealVolume)

/* The resolved symbols of the library's one load. */
#pragma clang assume_nonnull begin
typedef struct fermata_mikmod_functions {
#define FERMATA_MIKMOD_FIELD(name) __typeof__(name) *name;
    FERMATA_MIKMOD_SYMBOLS(FERMATA_MIKMOD_FIELD)
#undef FERMATA_MIKMOD_FIELD
} fermata_mikmod_functions;
#pragma clang assume_nonnull end

/* Fills `functions` from the library's handle (dlopen's). Returns NULL, or the name of the first symbol not found
 * (then `functions` is partly filled and must not be used). */
static inline const char *_Nullable fermata_mikmod_resolve(
    fermata_mikmod_functions *_Nonnull functions, void *_Nonnull library) {
#define FERMATA_MIKMOD_RESOLVE(name) \
    functions->name = (__typeof__(name) *)dlsym(library, #name); \
    if (functions->name == NULL) return #name;
    FERMATA_MIKMOD_SYMBOLS(FERMATA_MIKMOD_RESOLVE)
#undef FERMATA_MIKMOD_RESOLVE
    return NULL;
}
