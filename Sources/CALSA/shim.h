#pragma once
#include <alsa/asoundlib.h>
#include <stdarg.h>
#include <stdio.h>

/// Implemented in Swift (module ALSA, `@_cdecl`): receives each of alsa-lib's own error messages, formatted.
extern void fermata_alsa_log_message(const char *file, int line, const char *function, int err, const char *message);

/// alsa-lib's error handler is variadic, which Swift cannot implement: format here, forward to Swift.
static void fermata_alsa_error_handler(const char *file, int line, const char *function, int err, const char *fmt, ...) {
    char message[512];
    va_list arguments;
    va_start(arguments, fmt);
    vsnprintf(message, sizeof message, fmt, arguments);
    va_end(arguments);
    fermata_alsa_log_message(file, line, function, err, message);
}

/// Sends alsa-lib's error messages to `fermata_alsa_log_message` instead of standard error.
static inline int fermata_alsa_install_error_handler(void) {
    return snd_lib_error_set_handler(fermata_alsa_error_handler);
}
