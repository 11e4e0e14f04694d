// SPDX-License-Identifier: GPL-3.0-or-later

#include "SidplayShim.h"

#include <sidplayfp/SidConfig.h>
#include <sidplayfp/SidDatabase.h>
#include <sidplayfp/SidInfo.h>
#include <sidplayfp/SidTune.h>
#include <sidplayfp/SidTuneInfo.h>
#include <sidplayfp/builders/residfp.h>
#include <sidplayfp/sidplayfp.h>

#include <unicode/ucnv.h>
#include <unicode/ustring.h>

#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <new>
#include <vector>

struct fsid_tune {
    std::unique_ptr<SidTune> tune;
};

struct fsid_database {
    SidDatabase database;
};

struct fsid_player {
    sidplayfp player;
    ReSIDfpBuilder builder{"ReSID"};
    unsigned channels = 1;
};

namespace {

/// Copies `message` into the caller's buffer.
void report(const char *message, char *error, size_t size) {
    if (error == nullptr || size == 0) return;
    std::strncpy(error, message != nullptr ? message : "unknown error", size - 1);
    error[size - 1] = '\0';
}

/// Runs `body`, turning any C++ exception into NULL and its message in `error`.
template <typename Body>
auto guarded(char *error, size_t size, Body body) -> decltype(body()) {
    try {
        return body();
    } catch (const std::exception &exception) {
        report(exception.what(), error, size);
    } catch (...) {
        report("unknown error", error, size);
    }
    return nullptr;
}

/// Thrown by the loader when the tune's own file cannot be read: libsidplayfp catches only its own
/// errors, so this ends the load and is caught in `fsid_tune_load`.
struct UnreadableFile {};

/// The reader of the load in progress on this thread (libsidplayfp's loader callback takes no context).
struct Reader {
    fsid_read_function read;
    void *context;
    bool first;
};
thread_local Reader *currentReader = nullptr;

/// Serialises creating and destroying players: libsidplayfp 2.4's ReSIDfp emulation shares state between
/// players that two threads building or freeing one at a time corrupt (a stress test crashed within seconds;
/// mpd never does it, having one decoder thread). Rendering needs no lock.
std::mutex playersLock;

/// libsidplayfp's loader: the first file is the tune's own (failing to read it fails the load); a companion
/// file that cannot be read is left empty, which libsidplayfp treats as a single-file tune.
void load(const char *name, std::vector<uint8_t> &buffer) {
    Reader *reader = currentReader;
    const bool first = reader->first;
    reader->first = false;
    std::vector<uint8_t> bytes;
    if (reader->read(reader->context, name, &bytes) != 0) {
        if (first) throw UnreadableFile();
        bytes.clear();
    }
    buffer.swap(bytes);
}

}  // namespace

extern "C" {

void fsid_sink_append(void *sink, const uint8_t *bytes, size_t count) {
    auto *buffer = static_cast<std::vector<uint8_t> *>(sink);
    buffer->insert(buffer->end(), bytes, bytes + count);
}

fsid_tune *fsid_tune_load(const char *path, fsid_read_function read, void *context, char *error, size_t error_size) {
    Reader reader{read, context, true};
    currentReader = &reader;
    fsid_tune *tune = guarded(error, error_size, [&]() -> fsid_tune * {
        try {
            auto result = std::make_unique<fsid_tune>();
            result->tune = std::make_unique<SidTune>(load, path);
            if (!result->tune->getStatus()) {
                report(result->tune->statusString(), error, error_size);
                return nullptr;
            }
            return result.release();
        } catch (const UnreadableFile &) {
            report("cannot read the file", error, error_size);
            return nullptr;
        }
    });
    currentReader = nullptr;
    return tune;
}

fsid_tune *fsid_tune_read(const uint8_t *data, uint32_t size, char *error, size_t error_size) {
    return guarded(error, error_size, [&]() -> fsid_tune * {
        auto result = std::make_unique<fsid_tune>();
        result->tune = std::make_unique<SidTune>(data, size);
        if (!result->tune->getStatus()) {
            report(result->tune->statusString(), error, error_size);
            return nullptr;
        }
        return result.release();
    });
}

void fsid_tune_free(fsid_tune *tune) { delete tune; }

unsigned fsid_tune_songs(const fsid_tune *tune) { return tune->tune->getInfo()->songs(); }

unsigned fsid_tune_start_song(const fsid_tune *tune) { return tune->tune->getInfo()->startSong(); }

unsigned fsid_tune_select(fsid_tune *tune, unsigned song) { return tune->tune->selectSong(song); }

int fsid_tune_sid_chips(const fsid_tune *tune) { return tune->tune->getInfo()->sidChips(); }

unsigned fsid_tune_info_count(const fsid_tune *tune) { return tune->tune->getInfo()->numberOfInfoStrings(); }

size_t fsid_tune_info_string(const fsid_tune *tune, unsigned index, char *utf8, size_t size) {
    const SidTuneInfo *info = tune->tune->getInfo();
    const char *text = index < info->numberOfInfoStrings() ? info->infoString(index) : nullptr;
    if (text == nullptr) text = "";
    const int32_t length = int32_t(strnlen(text, 1024));
    UErrorCode status = U_ZERO_ERROR;
    UConverter *converter = ucnv_open("windows-1252", &status);
    if (U_SUCCESS(status)) {
        std::vector<UChar> utf16(size_t(length) + 1);
        const int32_t units = ucnv_toUChars(converter, utf16.data(), int32_t(utf16.size()), text, length, &status);
        ucnv_close(converter);
        int32_t written = 0;
        if (U_SUCCESS(status)) u_strToUTF8(utf8, int32_t(size), &written, utf16.data(), units, &status);
        if (U_SUCCESS(status) && status != U_STRING_NOT_TERMINATED_WARNING) return size_t(written);
    }
    // Without the converter, as mpd: every byte that is not printable ASCII becomes '?'.
    size_t count = 0;
    for (; count < size_t(length) && count < size; count++) {
        const unsigned char byte = static_cast<unsigned char>(text[count]);
        utf8[count] = byte >= 0x20 && byte < 0x7F ? char(byte) : '?';
    }
    return count;
}

int fsid_tune_md5(fsid_tune *tune, char *md5) {
    try {
        return tune->tune->createMD5New(md5) != nullptr ? 1 : 0;
    } catch (...) {
        return 0;
    }
}

fsid_database *fsid_database_open(const char *path, char *error, size_t error_size) {
    return guarded(error, error_size, [&]() -> fsid_database * {
        auto result = std::make_unique<fsid_database>();
        if (!result->database.open(path)) {
            report(result->database.error(), error, error_size);
            return nullptr;
        }
        return result.release();
    });
}

void fsid_database_free(fsid_database *database) { delete database; }

int64_t fsid_database_length_ms(fsid_database *database, fsid_tune *tune) {
    try {
        const int_least32_t milliseconds = database->database.lengthMs(*tune->tune);
        if (milliseconds >= 0) return milliseconds;
        const int_least32_t seconds = database->database.length(*tune->tune);
        return seconds >= 0 ? int64_t(seconds) * 1000 : -1;
    } catch (...) {
        return -1;
    }
}

fsid_player *fsid_player_new(
    fsid_tune *tune, const uint8_t *kernal, const uint8_t *basic, int filter, unsigned sample_rate, char *error,
    size_t error_size) {
    const std::lock_guard<std::mutex> hold(playersLock);
    return guarded(error, error_size, [&]() -> fsid_player * {
        auto result = std::make_unique<fsid_player>();
        sidplayfp &player = result->player;
        ReSIDfpBuilder &builder = result->builder;
        player.setRoms(kernal, basic, nullptr);
        if (!player.load(tune->tune.get())) {
            report(player.error(), error, error_size);
            return nullptr;
        }
        if (!builder.getStatus()) {
            report(builder.error(), error, error_size);
            return nullptr;
        }
        builder.create(player.info().maxsids());
        if (!builder.getStatus()) {
            report(builder.error(), error, error_size);
            return nullptr;
        }
        builder.filter(filter != 0);
        if (!builder.getStatus()) {
            report(builder.error(), error, error_size);
            return nullptr;
        }
        SidConfig config = player.config();
        config.frequency = sample_rate;
        config.sidEmulation = &builder;
        config.samplingMethod = SidConfig::INTERPOLATE;
        config.fastSampling = false;
        const bool stereo = tune->tune->getInfo()->sidChips() >= 2;
        config.playback = stereo ? SidConfig::STEREO : SidConfig::MONO;
        result->channels = stereo ? 2 : 1;
        if (!player.config(config)) {
            report(player.error(), error, error_size);
            return nullptr;
        }
        return result.release();
    });
}

void fsid_player_free(fsid_player *player) {
    const std::lock_guard<std::mutex> hold(playersLock);
    delete player;
}

unsigned fsid_player_channels(const fsid_player *player) { return player->channels; }

uint32_t fsid_player_play(fsid_player *player, int16_t *buffer, uint32_t count) {
    try {
        return player->player.play(buffer, count);
    } catch (...) {
        return 0;
    }
}

uint32_t fsid_player_time(const fsid_player *player) { return player->player.time(); }

void fsid_player_stop(fsid_player *player) { player->player.stop(); }

}  // extern "C"
