#pragma once
/* libpulse's headers only: the library is not linked but loaded with dlopen when a pulse output is first enabled
 * (Pulse module, PulseLibrary), and every function Fermata calls goes through the table below. */
#include <dlfcn.h>
#include <stddef.h>
#include <pulse/pulseaudio.h>
#include <pulse/thread-mainloop.h>

/* The soname Debian's libpulse-dev links (the header carries no version): scripts/make-deb.py reads it from here. */
#define FERMATA_PULSE_SONAME "libpulse.so.0"

/* Every libpulse function Fermata calls. Add a function here (and only here): the table's field gets the exact
 * type of libpulse's own declaration. */
#define FERMATA_PULSE_FUNCTIONS(X) \
    X(pa_threaded_mainloop_new) \
    X(pa_threaded_mainloop_free) \
    X(pa_threaded_mainloop_start) \
    X(pa_threaded_mainloop_stop) \
    X(pa_threaded_mainloop_lock) \
    X(pa_threaded_mainloop_unlock) \
    X(pa_threaded_mainloop_wait) \
    X(pa_threaded_mainloop_signal) \
    X(pa_threaded_mainloop_get_api) \
    X(pa_proplist_new) \
    X(pa_proplist_free) \
    X(pa_proplist_sets) \
    X(pa_context_new_with_proplist) \
    X(pa_context_unref) \
    X(pa_context_connect) \
    X(pa_context_disconnect) \
    X(pa_context_get_state) \
    X(pa_context_errno) \
    X(pa_context_set_state_callback) \
    X(pa_context_set_subscribe_callback) \
    X(pa_context_subscribe) \
    X(pa_context_get_sink_input_info) \
    X(pa_context_set_sink_input_volume) \
    X(pa_stream_new) \
    X(pa_stream_unref) \
    X(pa_stream_connect_playback) \
    X(pa_stream_disconnect) \
    X(pa_stream_get_state) \
    X(pa_stream_get_index) \
    X(pa_stream_set_state_callback) \
    X(pa_stream_set_write_callback) \
    X(pa_stream_set_suspended_callback) \
    X(pa_stream_begin_write) \
    X(pa_stream_write) \
    X(pa_stream_cork) \
    X(pa_stream_is_corked) \
    X(pa_stream_is_suspended) \
    X(pa_stream_drain) \
    X(pa_stream_flush) \
    X(pa_operation_get_state) \
    X(pa_operation_unref) \
    X(pa_strerror) \
    X(pa_channel_map_init_extend) \
    X(pa_channel_map_snprint) \
    X(pa_cvolume_avg) \
    X(pa_cvolume_set)

/* The resolved functions of the library's one load. */
#pragma clang assume_nonnull begin
typedef struct fermata_pulse_functions {
#define FERMATA_PULSE_FIELD(name) __typeof__(name) *name;
    FERMATA_PULSE_FUNCTIONS(FERMATA_PULSE_FIELD)
#undef FERMATA_PULSE_FIELD
} fermata_pulse_functions;
#pragma clang assume_nonnull end

/* Fills `functions` from the library's handle (dlopen's). Returns NULL, or the name of the first function not
 * found (then `functions` is partly filled and must not be used). */
static inline const char *_Nullable fermata_pulse_resolve(
    fermata_pulse_functions *_Nonnull functions, void *_Nonnull library) {
#define FERMATA_PULSE_RESOLVE(name) \
    functions->name = (__typeof__(name) *)dlsym(library, #name); \
    if (functions->name == NULL) return #name;
    FERMATA_PULSE_FUNCTIONS(FERMATA_PULSE_RESOLVE)
#undef FERMATA_PULSE_RESOLVE
    return NULL;
}
