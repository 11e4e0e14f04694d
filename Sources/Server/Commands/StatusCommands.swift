// SPDX-License-Identifier: GPL-3.0-or-later

import Library
import MPDProtocol
import Posix

/// `status`, `currentsong` and `stats`.
///
/// Until the queue and player exist (issue 4) the queue is empty and playback stopped, and until the
/// library exists (issue 3) there is no database, so `stats` prints only the daemon lines, as `mpd`
/// does without a database.
enum StatusCommands {
    static let all: [Command] = [
        Command("currentsong", .read, 0, 0) { _ in .ok },
        Command("stats", .read, 0, 0, stats),
        Command("status", .read, 0, 0, status),
    ]

    static func status(_ context: inout CommandContext) throws(AckError) -> CommandResult {
        let player = context.server.player
        context.write("repeat", player.repeatMode ? 1 : 0)
        context.write("random", player.random ? 1 : 0)
        context.write("single", player.single.wireValue)
        context.write("consume", player.consume ? 1 : 0)
        context.write("partition", "default")
        context.write("playlist", player.queueVersion)
        context.write("playlistlength", player.queueLength)
        context.write("mixrampdb", formatShortest(player.mixRampDB))
        context.write("state", player.state.rawValue)
        if let job = context.server.library?.updatingJobID { context.write("updating_db", job) }
        return .ok
    }

    static func stats(_ context: inout CommandContext) throws(AckError) -> CommandResult {
        let uptime = (MonotonicClock.now() - context.server.startTime) / 1_000_000_000
        context.write("uptime", uptime)
        context.write("playtime", context.server.player.playTimeSeconds)
        if let database = context.server.library?.database {
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
    static func formatShortest(_ value: Double) -> String {
        if value == value.rounded() && abs(value) < 1e15 { return String(Int64(value)) }
        return String(value)
    }
}
