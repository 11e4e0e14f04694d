// SPDX-License-Identifier: GPL-3.0-or-later
// A C interface over AdPlug's C++ API (CAdPlug::factory with a file provider, CPlayer, CEmuopl), for the
// `AdPlug` Swift module, its only importer. The player is an opaque handle; no C++ exception leaves it.
#pragma once

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// A player of one file with its OPL emulator (`CPlayer`, `CEmuopl`).
typedef struct fadplug_player fadplug_player;

/// Reads the file `name` for AdPlug: appends its bytes with `fadplug_sink_append(sink, …)` and returns 0, or
/// returns nonzero when it cannot be read. `context` is the one given to `fadplug_open`.
typedef int (*fadplug_read_function)(void *context, const char *name, void *sink);

/// Appends `count` bytes to the buffer a `fadplug_read_function` fills.
void fadplug_sink_append(void *sink, const uint8_t *bytes, size_t count);

/// Opens `path` with the first AdPlug player that loads it (those for its extension first, then the others),
/// on an emulated OPL (`CEmuopl`) at `rate` Hz, 16-bit stereo; every file is read through `read`. NULL when no
/// player loads it.
fadplug_player *fadplug_open(const char *path, unsigned rate, fadplug_read_function read, void *context);
/// Frees a player.
void fadplug_free(fadplug_player *player);
/// The song's length in milliseconds as AdPlug computes it (replaying it silently, at most 10 minutes), then
/// rewinds it.
unsigned long fadplug_songlength(fadplug_player *player);
/// What `fadplug_text` reads.
enum fadplug_text_kind { FADPLUG_TITLE = 0, FADPLUG_AUTHOR = 1, FADPLUG_DESCRIPTION = 2, FADPLUG_TYPE = 3 };
/// The title, author, description or file type, copied into `text` (`size` bytes, not terminated); returns its
/// full length.
size_t fadplug_text(fadplug_player *player, int kind, char *text, size_t size);
/// Runs one tick of the replay; 0 when the song ended.
int fadplug_update(fadplug_player *player);
/// Renders `frames` interleaved stereo frames of the OPL's output into `buffer`. Not safe while another player
/// renders: the emulator keeps the chip it renders in globals. (Opening and freeing take a lock.)
void fadplug_render(fadplug_player *player, int16_t *buffer, int frames);

#ifdef __cplusplus
}
#endif
