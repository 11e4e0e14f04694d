#pragma once
/* FFmpeg's headers only: the libraries are not linked but loaded with dlopen on first use (FFmpeg module,
 * FFmpegLibraries), and every function Fermata calls goes through the table below. */
#include <dlfcn.h>
#include <stddef.h>
#include <libavformat/avformat.h>
#include <libavcodec/avcodec.h>
#include <libavutil/avutil.h>

/* Constants whose C macros Swift cannot import (function-like or compound). */
static inline int fermata_averror_eof(void) { return AVERROR_EOF; }
static inline int fermata_averror_eagain(void) { return AVERROR(EAGAIN); }
static inline int fermata_averror_eio(void) { return AVERROR(EIO); }
static inline int64_t fermata_av_nopts_value(void) { return AV_NOPTS_VALUE; }
static inline int fermata_averror_exit(void) { return AVERROR_EXIT; }

/* Every FFmpeg function Fermata calls, with the library that defines it. Add a function here (and only here):
 * the table's field gets the exact type of FFmpeg's own declaration. */
#define FERMATA_FFMPEG_FUNCTIONS(X) \
    X(avutil, av_log_set_level) \
    X(avutil, av_strerror) \
    X(avutil, av_malloc) \
    X(avutil, av_free) \
    X(avutil, av_dict_set) \
    X(avutil, av_dict_get) \
    X(avutil, av_dict_free) \
    X(avutil, av_rescale_q) \
    X(avutil, av_frame_alloc) \
    X(avutil, av_frame_free) \
    X(avutil, av_get_bytes_per_sample) \
    X(avutil, av_sample_fmt_is_planar) \
    X(avcodec, avcodec_get_name) \
    X(avcodec, avcodec_descriptor_get) \
    X(avcodec, avcodec_find_decoder) \
    X(avcodec, avcodec_alloc_context3) \
    X(avcodec, avcodec_parameters_to_context) \
    X(avcodec, avcodec_open2) \
    X(avcodec, avcodec_free_context) \
    X(avcodec, avcodec_send_packet) \
    X(avcodec, avcodec_receive_frame) \
    X(avcodec, avcodec_flush_buffers) \
    X(avcodec, av_packet_alloc) \
    X(avcodec, av_packet_unref) \
    X(avcodec, av_packet_free) \
    X(avformat, avio_alloc_context) \
    X(avformat, avio_context_free) \
    X(avformat, avformat_alloc_context) \
    X(avformat, avformat_free_context) \
    X(avformat, avformat_open_input) \
    X(avformat, avformat_find_stream_info) \
    X(avformat, avformat_close_input) \
    X(avformat, av_read_frame) \
    X(avformat, av_seek_frame) \
    X(avformat, avio_open2) \
    X(avformat, avio_closep) \
    X(avformat, avio_read) \
    X(avformat, avio_seek) \
    X(avformat, avio_size) \
    X(avformat, avio_enum_protocols) \
    X(avformat, av_demuxer_iterate)

/* The resolved functions of one load of the libraries; valid until they are closed. */
#pragma clang assume_nonnull begin
typedef struct fermata_ffmpeg_functions {
#define FERMATA_FFMPEG_FIELD(library, name) __typeof__(name) *name;
    FERMATA_FFMPEG_FUNCTIONS(FERMATA_FFMPEG_FIELD)
#undef FERMATA_FFMPEG_FIELD
} fermata_ffmpeg_functions;
#pragma clang assume_nonnull end

/* Fills `functions` from the three libraries' handles (dlopen's). Returns NULL, or the name of the first
 * function not found (then `functions` is partly filled and must not be used). */
static inline const char *_Nullable fermata_ffmpeg_resolve(
    fermata_ffmpeg_functions *_Nonnull functions, void *_Nonnull avutil, void *_Nonnull avcodec,
    void *_Nonnull avformat) {
#define FERMATA_FFMPEG_RESOLVE(library, name) \
    functions->name = (__typeof__(name) *)dlsym(library, #name); \
    if (functions->name == NULL) return #name;
    FERMATA_FFMPEG_FUNCTIONS(FERMATA_FFMPEG_RESOLVE)
#undef FERMATA_FFMPEG_RESOLVE
    return NULL;
}
