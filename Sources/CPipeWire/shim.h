#pragma once
/* libpipewire's headers only: the library is not linked but loaded with dlopen when a pipewire output is first
 * enabled (PipeWire module, PipeWireLibrary), and every function Fermata calls goes through the table below. The
 * headers are in /usr/include/pipewire-0.3 and /usr/include/spa-0.2, which the PipeWire target's flags add (the
 * .pc file's cflags carry -D_REENTRANT, which SwiftPM refuses with a warning). */
#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>
#include <pipewire/pipewire.h>
#include <spa/param/audio/format-utils.h>
#include <spa/param/props.h>

/* The soname Debian's libpipewire-0.3-dev links (the header carries no version): scripts/make-deb.py reads it. */
#define FERMATA_PIPEWIRE_SONAME "libpipewire-0.3.so.0"

/* Every libpipewire function Fermata calls. Add a function here (and only here): the table's field gets the exact
 * type of libpipewire's own declaration. */
#define FERMATA_PIPEWIRE_FUNCTIONS(X) \
    X(pw_init) \
    X(pw_thread_loop_new) \
    X(pw_thread_loop_destroy) \
    X(pw_thread_loop_start) \
    X(pw_thread_loop_stop) \
    X(pw_thread_loop_lock) \
    X(pw_thread_loop_unlock) \
    X(pw_thread_loop_wait) \
    X(pw_thread_loop_signal) \
    X(pw_thread_loop_get_loop) \
    X(pw_properties_new) \
    X(pw_properties_set) \
    X(pw_stream_new_simple) \
    X(pw_stream_destroy) \
    X(pw_stream_connect) \
    X(pw_stream_dequeue_buffer) \
    X(pw_stream_queue_buffer) \
    X(pw_stream_flush) \
    X(pw_stream_set_active) \
    X(pw_stream_set_control) \
    X(pw_stream_update_properties)

/* The resolved functions of the library's one load. */
#pragma clang assume_nonnull begin
typedef struct fermata_pipewire_functions {
#define FERMATA_PIPEWIRE_FIELD(name) __typeof__(name) *name;
    FERMATA_PIPEWIRE_FUNCTIONS(FERMATA_PIPEWIRE_FIELD)
#undef FERMATA_PIPEWIRE_FIELD
} fermata_pipewire_functions;
#pragma clang assume_nonnull end

/* Fills `functions` from the library's handle (dlopen's). Returns NULL, or the name of the first function not
 * found (then `functions` is partly filled and must not be used). */
static inline const char *_Nullable fermata_pipewire_resolve(
    fermata_pipewire_functions *_Nonnull functions, void *_Nonnull library) {
#define FERMATA_PIPEWIRE_RESOLVE(name) \
    functions->name = (__typeof__(name) *)dlsym(library, #name); \
    if (functions->name == NULL) return #name;
    FERMATA_PIPEWIRE_FUNCTIONS(FERMATA_PIPEWIRE_RESOLVE)
#undef FERMATA_PIPEWIRE_RESOLVE
    return NULL;
}

/* The wrappers Swift needs: libpipewire's variadic functions and SPA's inline pod builder. */

/* An empty property list (pw_properties_new is variadic). */
static inline struct pw_properties *_Nullable fermata_pipewire_properties_new(
    const fermata_pipewire_functions *_Nonnull functions) {
    return functions->pw_properties_new(NULL, NULL);
}

/* Sets every channel's volume (`SPA_PROP_channelVolumes`) to `value`, as pw_stream_set_control takes it. */
static inline int fermata_pipewire_set_channel_volumes(
    const fermata_pipewire_functions *_Nonnull functions, struct pw_stream *_Nonnull stream, uint32_t channels,
    float value) {
    float values[SPA_AUDIO_MAX_CHANNELS];
    if (channels > SPA_AUDIO_MAX_CHANNELS) channels = SPA_AUDIO_MAX_CHANNELS;
    for (uint32_t i = 0; i < channels; i++) values[i] = value;
    return functions->pw_stream_set_control(stream, SPA_PROP_channelVolumes, channels, values, 0);
}

/* The EnumFormat pod of a raw audio stream, built in `buffer`: `positions` holds `channels` SPA channel positions,
 * or is NULL for an unpositioned stream. NULL when `buffer` is too small. */
static inline const struct spa_pod *_Nullable fermata_pipewire_raw_format(
    void *_Nonnull buffer, uint32_t size, uint32_t format, uint32_t rate, uint32_t channels,
    const uint32_t *_Nullable positions) {
    struct spa_audio_info_raw raw = {0};
    raw.format = (enum spa_audio_format)format;
    raw.rate = rate;
    raw.channels = channels;
    raw.flags = SPA_AUDIO_FLAG_NONE;
    if (positions == NULL || channels > SPA_AUDIO_MAX_CHANNELS) {
        raw.flags |= SPA_AUDIO_FLAG_UNPOSITIONED;
    } else {
        for (uint32_t i = 0; i < channels; i++) raw.position[i] = positions[i];
    }
    struct spa_pod_builder builder = SPA_POD_BUILDER_INIT(buffer, size);
    return spa_format_audio_raw_build(&builder, SPA_PARAM_EnumFormat, &raw);
}
