// SPDX-License-Identifier: GPL-3.0-or-later

#include "AdPlugShim.h"

#include <adplug/adplug.h>
#include <adplug/emuopl.h>
#include <adplug/fprovide.h>
#include <binio.h>

#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace {

/// A file's bytes read as AdPlug's own provider reads the file itself (libbinio's `binifstream` over stdio):
/// reading at the end sets `Eof` and gives 0xFF (getc's EOF as a byte), a seek may go past the end, a seek
/// before the start fails (`Fatal`) and leaves the position. (libbinio's memory stream differs at the end: it
/// gives 0 there, so a player probing past a short file's end would decide otherwise than in mpd.)
class FileLikeStream : public binistream {
public:
    explicit FileLikeStream(std::vector<uint8_t> bytes) : bytes_(std::move(bytes)) {}

    void seek(long offset, Offset origin) override {
        long base = 0;
        if (origin == Add) base = position_;
        if (origin == End) base = long(bytes_.size());
        if (offset < 0 && base < -offset) {
            err |= Fatal;
            return;
        }
        position_ = base + offset;
    }

    long pos() override { return position_; }

protected:
    Byte getByte() override {
        if (position_ >= 0 && size_t(position_) < bytes_.size()) return bytes_[size_t(position_++)];
        err |= Eof;
        return Byte(EOF);
    }

private:
    std::vector<uint8_t> bytes_;
    long position_ = 0;
};

/// AdPlug's file access through the caller's reader, with the flags AdPlug's own file provider sets.
class Provider : public CFileProvider {
public:
    Provider(fadplug_read_function read, void *context) : read_(read), context_(context) {}

    binistream *open(std::string name) const override {
        std::vector<uint8_t> bytes;
        if (read_(context_, name.c_str(), &bytes) != 0) return nullptr;
        auto *stream = new FileLikeStream(std::move(bytes));
        stream->setFlag(binio::BigEndian, false);
        stream->setFlag(binio::FloatIEEE);
        return stream;
    }

    void close(binistream *stream) const override { delete stream; }

private:
    fadplug_read_function read_;
    void *context_;
};

/// Serialises creating and destroying players: AdPlug's OPL emulator (MAME's fmopl) builds and frees tables
/// shared by all instances, counted by a plain integer (a stress test crashed at once).
std::mutex playersLock;

}  // namespace

struct fadplug_player {
    explicit fadplug_player(unsigned rate) : opl(int(rate), true, true) { opl.init(); }
    ~fadplug_player() { delete player; }

    CEmuopl opl;
    CPlayer *player = nullptr;
};

extern "C" {

void fadplug_sink_append(void *sink, const uint8_t *bytes, size_t count) {
    auto *buffer = static_cast<std::vector<uint8_t> *>(sink);
    buffer->insert(buffer->end(), bytes, bytes + count);
}

fadplug_player *fadplug_open(const char *path, unsigned rate, fadplug_read_function read, void *context) {
    const std::lock_guard<std::mutex> hold(playersLock);
    try {
        auto result = std::make_unique<fadplug_player>(rate);
        const Provider provider(read, context);
        result->player = CAdPlug::factory(path, &result->opl, CAdPlug::players, provider);
        return result->player != nullptr ? result.release() : nullptr;
    } catch (...) {
        return nullptr;
    }
}

void fadplug_free(fadplug_player *player) {
    const std::lock_guard<std::mutex> hold(playersLock);
    delete player;
}

unsigned long fadplug_songlength(fadplug_player *player) {
    try {
        return player->player->songlength();
    } catch (...) {
        return 0;
    }
}

size_t fadplug_text(fadplug_player *player, int kind, char *text, size_t size) {
    try {
        std::string value;
        switch (kind) {
        case FADPLUG_TITLE: value = player->player->gettitle(); break;
        case FADPLUG_AUTHOR: value = player->player->getauthor(); break;
        case FADPLUG_DESCRIPTION: value = player->player->getdesc(); break;
        default: value = player->player->gettype(); break;
        }
        std::memcpy(text, value.data(), value.size() < size ? value.size() : size);
        return value.size();
    } catch (...) {
        return 0;
    }
}

int fadplug_update(fadplug_player *player) {
    try {
        return player->player->update() ? 1 : 0;
    } catch (...) {
        return 0;
    }
}

void fadplug_render(fadplug_player *player, int16_t *buffer, int frames) { player->opl.update(buffer, frames); }

}  // extern "C"
