// SPDX-License-Identifier: GPL-3.0-or-later

import Library
import MPDProtocol
import Playback
import Posix

/// `status`, `currentsong` and `stats`.
enum StatusCommands {
    static let all: [Command] = [
        Command("currentsong", .read, 0, 0) { context in
            if let position = context.partition.playlist.currentPosition {
                QueueCommands.writeItem(at: position, context: context)
            }
            return .ok
        },
        Command("stats", .read, 0, 0, stats),
        Command("status", .read, 0, 0, status),
    ]

    /// Every field in `mpd` 0.23's order.
    static func status(_ context: inout CommandContext) throws(AckError) -> CommandResult {
        let playlist = context.partition.playlist
        let player = playlist.player
        let queue = playlist.queue
        let snapshot = player.snapshot
        var text = ""
        if let volume = context.partition.volume() { text += "volume: \(volume)\n" }
        text += "repeat: \(queue.repeatMode ? 1 : 0)\nrandom: \(queue.random ? 1 : 0)\n"
        text +=
            "single: \(queue.single.wireValue)\nconsume: \(queue.consume ? 1 : 0)\npartition: \(context.partition.name)\n"
        text += "playlist: \(queue.version)\nplaylistlength: \(queue.count)\n"
        text += "mixrampdb: \(formatShortest(Float(player.mixRampDB)))\nstate: \(snapshot.state.rawValue)\n"
        if player.crossfadeSeconds > 0 { text += "xfade: \(Int(player.crossfadeSeconds.rounded()))\n" }
        if player.mixRampDelay > 0 { text += "mixrampdelay: \(formatShortest(Float(player.mixRampDelay)))\n" }
        if let position = playlist.currentPosition {
            text += "song: \(position)\nsongid: \(queue.items[position].id)\n"
        }
        if snapshot.state != .stop {
            // Whole milliseconds, as mpd's SongTime; a seek target of n ms is n / 1000 s, and 1.001 * 1000 is
            // 1000.999…: a nanosecond's tolerance keeps it n.
            let elapsed = UInt64(max(0, snapshot.elapsedSeconds * 1000 + 1e-6))
            // Rounded: the duration is milliseconds / 1000, and 2.042 * 1000 is 2041.999…
            let total = snapshot.durationSeconds.map { UInt64(max(0, ($0 * 1000).rounded())) }
            text += "time: \((elapsed + 500) / 1000):\(total.map { ($0 + 500) / 1000 } ?? 0)\n"
            text += "elapsed: \(SongPrinter.seconds3(elapsed))\nbitrate: \(snapshot.bitRate)\n"
            if let total { text += "duration: \(SongPrinter.seconds3(total))\n" }
            if let format = snapshot.audioFormat { text += "audio: \(format)\n" }
        }
        if let job = context.services.library?.updatingJobID { text += "updating_db: \(job)\n" }
        if let error = playlist.error { text += "error: \(error)\n" }
        if let position = playlist.nextPosition {
            text += "nextsong: \(position)\nnextsongid: \(queue.items[position].id)\n"
        }
        context.write(raw: text)
        return .ok
    }

    static func stats(_ context: inout CommandContext) throws(AckError) -> CommandResult {
        let uptime = (MonotonicClock.now() - context.services.startTime) / 1_000_000_000
        context.write("uptime", uptime)
        context.write("playtime", context.partition.playTime.seconds())
        if let database = context.services.library?.database {
            let statistics = database.statistics
            context.write("artists", statistics.artists)
            context.write("albums", statistics.albums)
            context.write("songs", statistics.songs)
            context.write("db_playtime", statistics.playTimeSeconds)
            context.write("db_update", database.updateTime)
        }
        return .ok
    }

    /// `mpd` prints floats with fmt's shortest form: `0`, `-17.5`.
    static func formatShortest(_ value: Float) -> String {
        if value == value.rounded() && abs(value) < 1e15 { return String(Int64(value)) }
        return String(value)
    }
}
