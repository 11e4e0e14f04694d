#pragma once
#include <libavformat/avformat.h>
#include <libavcodec/avcodec.h>
#include <libavutil/avutil.h>

/* Constants whose C macros Swift cannot import (function-like or compound). */
static inline int fermata_averror_eof(void) { return AVERROR_EOF; }
static inline int fermata_averror_eagain(void) { return AVERROR(EAGAIN); }
static inline int fermata_averror_eio(void) { return AVERROR(EIO); }
static inline int64_t fermata_av_nopts_value(void) { return AV_NOPTS_VALUE; }
