#pragma once
#include <opus.h>

/* opus_encoder_ctl is variadic, which Swift cannot call: one typed wrapper per shape of request. */
static inline int fermata_opus_set(OpusEncoder *encoder, int request, opus_int32 value) {
    return opus_encoder_ctl(encoder, request, value);
}

static inline opus_int32 fermata_opus_get(OpusEncoder *encoder, int request) {
    opus_int32 value = 0;
    opus_encoder_ctl(encoder, request, &value);
    return value;
}

static inline int fermata_opus_reset(OpusEncoder *encoder) {
    return opus_encoder_ctl(encoder, OPUS_RESET_STATE);
}
