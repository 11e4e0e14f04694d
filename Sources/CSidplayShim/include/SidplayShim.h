// SPDX-License-Identifier: GPL-3.0-or-later
// A C interface over libsidplayfp's C++ API (SidTune, SidDatabase, sidplayfp with a ReSIDfp builder), for the
// `Sidplay` Swift module, its only importer. Every object is an opaque handle; no C++ exception leaves it.
#pragma once

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// A loaded tune (`SidTune`).
typedef struct fsid_tune fsid_tune;
/// A song length database (`SidDatabase`).
typedef struct fsid_database fsid_database;
/// A player with its ReSIDfp builder (`sidplayfp`, `ReSIDfpBuilder`).
typedef struct fsid_player fsid_player;

/// Reads the file `name` for libsidplayfp: appends its bytes with `fsid_sink_append(sink, …)` and returns 0,
/// or returns nonzero when it cannot be read. `context` is the one given to `fsid_tune_load`.
typedef int (*fsid_read_function)(void *context, const char *name, void *sink);

/// Appends `count` bytes to the buffer a `fsid_read_function` fills.
void fsid_sink_append(void *sink, const uint8_t *bytes, size_t count);

/// Loads the tune at `path` (with its companion file for two-file formats), reading every file through `read`.
/// Returns NULL on failure and copies libsidplayfp's message into `error` (`error_size` bytes).
fsid_tune *fsid_tune_load(const char *path, fsid_read_function read, void *context, char *error, size_t error_size);
/// Loads a single-file tune (PSID, RSID, MUS) from memory; NULL on failure, with the message in `error`.
fsid_tune *fsid_tune_read(const uint8_t *data, uint32_t size, char *error, size_t error_size);
/// Frees a tune.
void fsid_tune_free(fsid_tune *tune);
/// The number of songs.
unsigned fsid_tune_songs(const fsid_tune *tune);
/// The song played when none is chosen (1-based).
unsigned fsid_tune_start_song(const fsid_tune *tune);
/// Selects song `song` (1-based; 0 = the start song); returns the selected song.
unsigned fsid_tune_select(fsid_tune *tune, unsigned song);
/// The number of SID chips the tune uses (1 to 3).
int fsid_tune_sid_chips(const fsid_tune *tune);
/// The number of info strings (title, author, released).
unsigned fsid_tune_info_count(const fsid_tune *tune);
/// Info string `index` converted from Windows-1252 to UTF-8 by ICU (as mpd does), written to `utf8` (`size`
/// bytes, at least 4 times 1024 to hold any string); returns its length. Without the ICU converter, bytes that
/// are not printable ASCII become '?', as in mpd. An index past the last string gives an empty string.
size_t fsid_tune_info_string(const fsid_tune *tune, unsigned index, char *utf8, size_t size);

/// The tune's MD5 in the HVSC 68 format (of the whole file; 32 hex digits and a NUL into `md5`, 33 bytes), as
/// song length databases key it; returns 0 when there is none.
int fsid_tune_md5(fsid_tune *tune, char *md5);

/// Opens a song length database file (`Songlengths.md5`); NULL on failure, with the message in `error`.
fsid_database *fsid_database_open(const char *path, char *error, size_t error_size);
/// Frees a database.
void fsid_database_free(fsid_database *database);
/// The length of the tune's selected song in milliseconds: the new (HVSC 68) format's, else the old one's
/// seconds; -1 when the database has none.
int64_t fsid_database_length_ms(fsid_database *database, fsid_tune *tune);

/// Creates a player of the tune's selected song at 48 kHz, 16-bit, mono (stereo for tunes of two or more SID
/// chips), ReSIDfp with interpolation, its filter on or off; `kernal` and `basic` are 8 KiB ROM images or NULL.
/// The tune must outlive the player. NULL on failure, with the message in `error`. Creating and freeing players
/// take a lock shared by all players (libsidplayfp's emulation is not safe to build on two threads at once).
fsid_player *fsid_player_new(
    fsid_tune *tune, const uint8_t *kernal, const uint8_t *basic, int filter, unsigned sample_rate, char *error,
    size_t error_size);
/// Frees a player.
void fsid_player_free(fsid_player *player);
/// 1 or 2.
unsigned fsid_player_channels(const fsid_player *player);
/// Renders up to `count` samples (interleaved for stereo); returns how many it rendered (0 when it stopped).
uint32_t fsid_player_play(fsid_player *player, int16_t *buffer, uint32_t count);
/// Seconds played since the song started.
uint32_t fsid_player_time(const fsid_player *player);
/// Stops the song: the next `fsid_player_play` restarts it from its beginning.
void fsid_player_stop(fsid_player *player);

#ifdef __cplusplus
}
#endif
