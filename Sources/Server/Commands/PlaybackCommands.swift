// SPDX-License-Identifier: GPL-3.0-or-later

import MPDProtocol
import Playback

/// Playback control and options: `play`, `pause`, `stop`, `next`, `seek`…, `repeat`, `random`, `single`,
/// `consume`, `crossfade`, MixRamp, ReplayGain, `clearerror`.
enum PlaybackCommands {
    static let all: [Command] = [
        Command("clearerror", .player, 0, 0) { context in
            context.partition.playlist.clearError()
            return .ok
        },
        Command("consume", .player, 1, 1) { context throws(AckError) in
            context.partition.playlist.setConsume(try ArgumentParser.bool(context.arguments[0]))
            return .ok
        },
        Command("crossfade", .player, 1, 1) { context throws(AckError) in
            let seconds = try ArgumentParser.unsigned(context.arguments[0])
            context.partition.player.crossfadeSeconds = Double(seconds)
            // As mpd 0.23 (its player control raises it): for every client, whatever its partition.
            context.services.emit(.options)
            return .ok
        },
        Command("mixrampdb", .player, 1, 1) { context throws(AckError) in
            context.partition.player.mixRampDB = try QueueArguments.float(context.arguments[0])
            // As mpd 0.23 (its player control raises it): for every client, whatever its partition.
            context.services.emit(.options)
            return .ok
        },
        Command("mixrampdelay", .player, 1, 1) { context throws(AckError) in
            context.partition.player.mixRampDelay = try QueueArguments.float(context.arguments[0])
            // As mpd 0.23 (its player control raises it): for every client, whatever its partition.
            context.services.emit(.options)
            return .ok
        },
        Command("next", .player, 0, 0) { context throws(AckError) in
            let playlist = context.partition.playlist
            // The user skipping on is not held back by single mode.
            try playlistAction { () throws(PlaylistError) in try playlist.playNext(ignoringSingle: true) }
            return .ok
        },
        // As mpd: answered once the outputs stopped writing (or, resuming, opened their streams again).
        Command("pause", .player, 0, 1) { context throws(AckError) in
            if let text = context.arguments.first {
                context.partition.playlist.setPaused(try ArgumentParser.bool(text))
            } else {
                context.partition.playlist.togglePause()
            }
            return OutputCommands.afterOutputs(context.partition.player)
        },
        Command("play", .player, 0, 1) { context throws(AckError) in
            let position = try context.arguments.first.map { text throws(AckError) in try ArgumentParser.signed(text) }
            let playlist = context.partition.playlist
            return try resuming(playlist) { () throws(PlaylistError) in try playlist.play(position: position ?? -1) }
        },
        Command("playid", .player, 0, 1) { context throws(AckError) in
            let id = try context.arguments.first.map { text throws(AckError) in try ArgumentParser.signed(text) }
            let playlist = context.partition.playlist
            return try resuming(playlist) { () throws(PlaylistError) in try playlist.play(id: id ?? -1) }
        },
        Command("previous", .player, 0, 0) { context throws(AckError) in
            let playlist = context.partition.playlist
            try playlistAction { () throws(PlaylistError) in try playlist.playPrevious() }
            return .ok
        },
        Command("random", .player, 1, 1) { context throws(AckError) in
            context.partition.playlist.setRandom(try ArgumentParser.bool(context.arguments[0]))
            return .ok
        },
        Command("repeat", .player, 1, 1) { context throws(AckError) in
            context.partition.playlist.setRepeat(try ArgumentParser.bool(context.arguments[0]))
            return .ok
        },
        Command("replay_gain_mode", .player, 1, 1) { context throws(AckError) in
            guard let mode = ReplayGainMode(rawValue: context.arguments[0]) else {
                throw AckError(.arg, "Unrecognized replay gain mode")
            }
            context.partition.playlist.replayGainMode = mode
            context.partition.emit(.options)
            return .ok
        },
        Command("replay_gain_status", .read, 0, 0) { context in
            context.write("replay_gain_mode", context.partition.playlist.replayGainMode.rawValue)
            return .ok
        },
        Command("seek", .player, 2, 2) { context throws(AckError) in
            let position = try ArgumentParser.unsigned(context.arguments[0])
            let seconds = try QueueArguments.songTime(context.arguments[1])
            let playlist = context.partition.playlist
            try playlistAction { () throws(PlaylistError) in
                try playlist.seek(position: Int(position), seconds: seconds)
            }
            return .ok
        },
        Command("seekcur", .player, 1, 1) { context throws(AckError) in
            let text = context.arguments[0]
            let relative = text.hasPrefix("+") || text.hasPrefix("-")
            let seconds = try QueueArguments.float(text)
            let playlist = context.partition.playlist
            try playlistAction { () throws(PlaylistError) in
                try playlist.seekCurrent(seconds: seconds, relative: relative)
            }
            return .ok
        },
        Command("seekid", .player, 2, 2) { context throws(AckError) in
            let id = try ArgumentParser.unsigned(context.arguments[0])
            let seconds = try QueueArguments.songTime(context.arguments[1])
            let playlist = context.partition.playlist
            try playlistAction { () throws(PlaylistError) in try playlist.seek(id: Int(id), seconds: seconds) }
            return .ok
        },
        Command("single", .player, 1, 1) { context throws(AckError) in
            guard let mode = SingleMode(wireValue: context.arguments[0]) else {
                throw AckError(.arg, "Unrecognized single mode, expected 0, 1, or oneshot")
            }
            context.partition.playlist.setSingle(mode)
            return .ok
        },
        // As mpd: answered once the outputs closed their streams.
        Command("stop", .player, 0, 0) { context in
            context.partition.playlist.stop()
            return OutputCommands.afterOutputs(context.partition.player)
        },
    ]

    /// `play` and `playid`: from a pause, answered once the outputs opened their streams again, as `mpd` answers
    /// (from a stop, at once: `mpd` opens its outputs when the decoder has the song's format).
    static func resuming(_ playlist: Playlist, _ action: () throws(PlaylistError) -> Void) throws(AckError)
        -> CommandResult
    {
        let paused = playlist.player.snapshot.state == .pause
        try playlistAction(action)
        return paused ? OutputCommands.afterOutputs(playlist.player) : .ok
    }
}
