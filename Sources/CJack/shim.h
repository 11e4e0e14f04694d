#pragma once
/* libjack's headers only: the library is not linked but loaded with dlopen when a jack output is first enabled (Jack
 * module, JackLibrary), and every function Fermata calls goes through the table below.
 *
 * Besides the table, this header holds the code JACK's threads run: the process callback (JACK's realtime thread,
 * once per period) and the shutdown callback. They are C so that those threads never enter the Swift runtime
 * (reference counting, exclusivity checks): the process callback only reads lock-free ring buffers, copies floats and
 * reads or writes atomics. The output thread's writer (deinterleaving into the ring buffers) is here too, as the
 * other half of the same lock-free protocol. */
#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <jack/jack.h>
#include <jack/ringbuffer.h>

/* The soname Debian's libjack-dev links (the header carries no version): scripts/make-deb.py reads it from here. */
#define FERMATA_JACK_SONAME "libjack.so.0"

/* Every libjack function Fermata calls. Add a function here (and only here): the table's field gets the exact type
 * of libjack's own declaration. */
#define FERMATA_JACK_FUNCTIONS(X) \
    X(jack_client_open) \
    X(jack_client_close) \
    X(jack_activate) \
    X(jack_deactivate) \
    X(jack_set_process_callback) \
    X(jack_on_info_shutdown) \
    X(jack_set_error_function) \
    X(jack_get_sample_rate) \
    X(jack_port_register) \
    X(jack_port_name) \
    X(jack_port_get_buffer) \
    X(jack_get_ports) \
    X(jack_connect) \
    X(jack_free) \
    X(jack_ringbuffer_create) \
    X(jack_ringbuffer_free) \
    X(jack_ringbuffer_reset) \
    X(jack_ringbuffer_read_space) \
    X(jack_ringbuffer_read) \
    X(jack_ringbuffer_read_advance) \
    X(jack_ringbuffer_get_write_vector) \
    X(jack_ringbuffer_write_advance)

/* The resolved functions of the library's one load. */
#pragma clang assume_nonnull begin
typedef struct fermata_jack_functions {
#define FERMATA_JACK_FIELD(name) __typeof__(name) *name;
    FERMATA_JACK_FUNCTIONS(FERMATA_JACK_FIELD)
#undef FERMATA_JACK_FIELD
} fermata_jack_functions;
#pragma clang assume_nonnull end

/* Fills `functions` from the library's handle (dlopen's). Returns NULL, or the name of the first function not found
 * (then `functions` is partly filled and must not be used). */
static inline const char *_Nullable fermata_jack_resolve(
    fermata_jack_functions *_Nonnull functions, void *_Nonnull library) {
#define FERMATA_JACK_RESOLVE(name) \
    functions->name = (__typeof__(name) *)dlsym(library, #name); \
    if (functions->name == NULL) return #name;
    FERMATA_JACK_FUNCTIONS(FERMATA_JACK_RESOLVE)
#undef FERMATA_JACK_RESOLVE
    return NULL;
}

/* jack_client_open is variadic (the server name follows when `options` has JackServerName), which Swift cannot call. */
static inline jack_client_t *_Nullable fermata_jack_client_open(
    const fermata_jack_functions *_Nonnull functions, const char *_Nonnull name, jack_options_t options,
    jack_status_t *_Nonnull status, const char *_Nullable server_name) {
    return functions->jack_client_open(name, options, status, server_name);
}

/* The most ports (source ports, destination ports) an output has, as mpd's jack output. */
#define FERMATA_JACK_MAX_PORTS 16
/* The longest shutdown reason kept (libjack's reasons are one short line). */
#define FERMATA_JACK_REASON_SIZE 256

/* What JACK's threads share with the output thread; allocated by the output (Swift) for the output's lifetime, and
 * registered as the callbacks' argument only while a client exists.
 *
 * The output thread sets `ports`, `rings`, `channels` and `source_ports` only while the client is not active (no
 * process callback runs); the process callback reads them. `paused` and `shut_down` are atomics. The rings are
 * single-reader (the process callback) single-writer (the output thread), as jack_ringbuffer_t is made for. */
typedef struct fermata_jack_shared {
    /* The table's copies of the functions the process callback calls. */
    __typeof__(jack_port_get_buffer) *_Nullable port_get_buffer;
    __typeof__(jack_ringbuffer_read_space) *_Nullable read_space;
    __typeof__(jack_ringbuffer_read) *_Nullable read;
    __typeof__(jack_ringbuffer_read_advance) *_Nullable read_advance;
    __typeof__(jack_ringbuffer_get_write_vector) *_Nullable get_write_vector;
    __typeof__(jack_ringbuffer_write_advance) *_Nullable write_advance;
    jack_port_t *_Nullable ports[FERMATA_JACK_MAX_PORTS];
    jack_ringbuffer_t *_Nullable rings[FERMATA_JACK_MAX_PORTS];
    /* The channels of the open stream (a ring and a port each); the other source ports play silence. */
    unsigned channels;
    unsigned source_ports;
    /* Set while paused: the process callback drops what the rings hold and plays silence. */
    int paused;
    /* Set by the shutdown callback (the server went away); `reason` is written before it is set. */
    int shut_down;
    char reason[FERMATA_JACK_REASON_SIZE];
} fermata_jack_shared;

/* The source port and ring buffer at `index` (Swift sees the arrays as tuples). Output thread, client inactive. */
static inline jack_port_t *_Nullable fermata_jack_port(const fermata_jack_shared *_Nonnull shared, unsigned index) {
    return index < FERMATA_JACK_MAX_PORTS ? shared->ports[index] : NULL;
}
static inline void fermata_jack_set_port(
    fermata_jack_shared *_Nonnull shared, unsigned index, jack_port_t *_Nullable port) {
    if (index < FERMATA_JACK_MAX_PORTS) shared->ports[index] = port;
}
static inline jack_ringbuffer_t *_Nullable fermata_jack_ring(const fermata_jack_shared *_Nonnull shared, unsigned index) {
    return index < FERMATA_JACK_MAX_PORTS ? shared->rings[index] : NULL;
}
static inline void fermata_jack_set_ring(
    fermata_jack_shared *_Nonnull shared, unsigned index, jack_ringbuffer_t *_Nullable ring) {
    if (index < FERMATA_JACK_MAX_PORTS) shared->rings[index] = ring;
}

static inline void fermata_jack_set_paused(fermata_jack_shared *_Nonnull shared, int paused) {
    __atomic_store_n(&shared->paused, paused, __ATOMIC_RELEASE);
}

static inline int fermata_jack_is_shut_down(const fermata_jack_shared *_Nonnull shared) {
    return __atomic_load_n(&shared->shut_down, __ATOMIC_ACQUIRE);
}

/* Clears the shutdown state (before a new client is opened: no callback of the old one runs any more). */
static inline void fermata_jack_clear_shut_down(fermata_jack_shared *_Nonnull shared) {
    shared->reason[0] = 0;
    __atomic_store_n(&shared->shut_down, 0, __ATOMIC_RELEASE);
}

/* The frames every ring of the stream's channels holds (the fewest). */
static inline size_t fermata_jack_readable_frames(const fermata_jack_shared *_Nonnull shared) {
    size_t fewest = SIZE_MAX;
    for (unsigned i = 0; i < shared->channels; i++) {
        size_t bytes = shared->read_space(shared->rings[i]);
        if (bytes < fewest) fewest = bytes;
    }
    return shared->channels == 0 ? 0 : fewest / sizeof(jack_default_audio_sample_t);
}

static inline void fermata_jack_silence(fermata_jack_shared *_Nonnull shared, unsigned port, jack_nframes_t frames) {
    jack_default_audio_sample_t *out = shared->port_get_buffer(shared->ports[port], frames);
    /* libjack1 may run the callback once more after the server is lost, without buffers. */
    if (out != NULL) memset(out, 0, frames * sizeof(jack_default_audio_sample_t));
}

/* JACK's process callback (realtime thread): each channel's port gets the frames its ring holds (as many on every
 * channel), silence after an underrun; silence on the source ports the stream does not use; silence while paused,
 * with the rings emptied. No allocation, lock or log. */
static inline int fermata_jack_process(jack_nframes_t frames, void *_Nullable argument) {
    fermata_jack_shared *shared = argument;
    if (shared == NULL || frames == 0) return 0;
    size_t available = fermata_jack_readable_frames(shared);
    if (__atomic_load_n(&shared->paused, __ATOMIC_ACQUIRE)) {
        for (unsigned i = 0; i < shared->channels; i++)
            shared->read_advance(shared->rings[i], available * sizeof(jack_default_audio_sample_t));
        for (unsigned i = 0; i < shared->channels; i++) fermata_jack_silence(shared, i, frames);
        return 0;
    }
    if (available > frames) available = frames;
    for (unsigned i = 0; i < shared->channels; i++) {
        jack_default_audio_sample_t *out = shared->port_get_buffer(shared->ports[i], frames);
        if (out == NULL) continue;
        shared->read(shared->rings[i], (char *)out, available * sizeof(jack_default_audio_sample_t));
        memset(out + available, 0, (frames - available) * sizeof(jack_default_audio_sample_t));
    }
    for (unsigned i = shared->channels; i < shared->source_ports; i++) fermata_jack_silence(shared, i, frames);
    return 0;
}

/* JACK's shutdown callback (the server closed the connection or went away): keeps the reason for the output thread. */
static inline void fermata_jack_shutdown(jack_status_t code, const char *_Nullable reason, void *_Nullable argument) {
    (void)code;
    fermata_jack_shared *shared = argument;
    if (shared == NULL || __atomic_load_n(&shared->shut_down, __ATOMIC_ACQUIRE)) return;
    strncpy(shared->reason, reason != NULL ? reason : "", FERMATA_JACK_REASON_SIZE - 1);
    shared->reason[FERMATA_JACK_REASON_SIZE - 1] = 0;
    __atomic_store_n(&shared->shut_down, 1, __ATOMIC_RELEASE);
}

/* Output thread: deinterleaves up to `frames` frames of `source` into the rings, as many on every channel (the
 * fewest any ring has room for, in its first contiguous free area). Returns the frames written (0: the rings are
 * full). */
static inline size_t fermata_jack_write(
    fermata_jack_shared *_Nonnull shared, const float *_Nonnull source, size_t frames) {
    float *destinations[FERMATA_JACK_MAX_PORTS];
    size_t room = SIZE_MAX;
    unsigned channels = shared->channels;
    for (unsigned i = 0; i < channels; i++) {
        jack_ringbuffer_data_t vector[2];
        shared->get_write_vector(shared->rings[i], vector);
        const jack_ringbuffer_data_t *area = &vector[vector[0].len == 0 ? 1 : 0];
        if (area->len < room) room = area->len;
        destinations[i] = (float *)(void *)area->buf;
    }
    room /= sizeof(float);
    if (channels == 0 || room == 0) return 0;
    size_t count = frames < room ? frames : room;
    for (size_t frame = 0; frame < count; frame++)
        for (unsigned i = 0; i < channels; i++) destinations[i][frame] = *source++;
    for (unsigned i = 0; i < channels; i++) shared->write_advance(shared->rings[i], count * sizeof(float));
    return count;
}
