// SPDX-License-Identifier: GPL-3.0-or-later

import MPDProtocol
import Playback

/// Outputs and volume: `outputs`, `enableoutput`, `disableoutput`, `toggleoutput`, `outputset`, `setvol`,
/// `volume`, `getvol`.
enum OutputCommands {
    static let all: [Command] = [
        Command("disableoutput", .admin, 1, 1) { context throws(AckError) in try setOutput(&context, .disable) },
        Command("enableoutput", .admin, 1, 1) { context throws(AckError) in try setOutput(&context, .enable) },
        Command("getvol", .read, 0, 0) { context in
            if let volume = context.partition.volume() { context.write("volume", volume) }
            return .ok
        },
        Command("outputs", .read, 0, 0, outputs),
        Command("outputset", .admin, 3, 3, outputset),
        Command("setvol", .player, 1, 1) { context throws(AckError) in
            let volume = try ArgumentParser.unsigned(context.arguments[0], maximum: 100)
            // As mpd's mixer memento: the value for the state file's `sw_volume` is kept even without a mixer, and the
            // volume read last is forgotten, whether or not a mixer takes the new one.
            context.partition.softwareVolume = Int(volume)
            context.partition.invalidateVolume()
            if let failure = context.partition.playlist.player.setVolume(Int(volume)).message {
                throw AckError(.unknown, failure)
            }
            context.partition.emit(.mixer)
            return .ok
        },
        Command("toggleoutput", .admin, 1, 1) { context throws(AckError) in try setOutput(&context, .toggle) },
        Command("volume", .player, 1, 1) { context throws(AckError) in
            let change = try ArgumentParser.signed(context.arguments[0])
            guard change >= -100 && change <= 100 else {
                throw AckError(.arg, "Number too large: \(context.arguments[0])")
            }
            let player = context.partition.playlist.player
            // As mpd: from the volume read last, if it was read less than a second ago.
            guard let old = context.partition.volume() else { throw AckError(.system, "No mixer") }
            let new = min(max(old + change, 0), 100)
            if new != old {
                // As mpd's mixer memento, the value is kept before the mixers are asked.
                context.partition.softwareVolume = new
                context.partition.invalidateVolume()
                if let failure = player.setVolume(new).message { throw AckError(.unknown, failure) }
                context.partition.emit(.mixer)
            }
            return .ok
        },
    ]

    static func outputs(_ context: inout CommandContext) throws(AckError) -> CommandResult {
        var text = ""
        for output in context.partition.playlist.player.outputs {
            text += "outputid: \(output.id)\noutputname: \(output.name)\nplugin: \(output.plugin)\n"
            text += "outputenabled: \(output.enabled ? 1 : 0)\n"
            for attribute in output.attributes { text += "attribute: \(attribute.name)=\(attribute.value)\n" }
        }
        context.write(raw: text)
        return .ok
    }

    enum Change {
        case enable, disable, toggle
    }

    /// `enableoutput`, `disableoutput`, `toggleoutput`: idle `output` when the state changes (`toggleoutput`
    /// always changes it), and `mixer` when an output with a mixer is enabled or disabled (`toggleoutput`:
    /// only disabled), as `mpd`, whether or not any mixer still reports a volume. A change is answered once the
    /// outputs applied it (a device enabled or disabled), as `mpd` answers, without the loop waiting.
    static func setOutput(_ context: inout CommandContext, _ change: Change) throws(AckError) -> CommandResult {
        let id = try ArgumentParser.unsigned(context.arguments[0])
        let player = context.partition.playlist.player
        guard let output = player.outputs.first(where: { $0.id == Int(id) }) else {
            throw AckError(.noExist, "No such audio output")
        }
        let enabled =
            switch change {
            case .enable: true
            case .disable: false
            case .toggle: !output.enabled
            }
        guard enabled != output.enabled else { return .ok }
        guard player.setOutput(id: Int(id), enabled: enabled) else { throw AckError(.noExist, "No such audio output") }
        // As mpd 0.23: raised for every client, whatever its partition.
        context.services.emit(.output)
        if output.hasMixer && (change != .toggle || !enabled) {
            // As mpd: the volume read last is forgotten in the client's partition.
            context.partition.invalidateVolume()
            context.services.emit(.mixer)
        }
        return afterOutputs(player)
    }

    /// `OK` once every output of `player` did what it was last asked (``PlayerControl/whenOutputsApplied(_:)``), as
    /// `mpd` answers the commands its output threads carry out once they are done, without the loop waiting; idle
    /// events wait for it, as they wait for `mpd`'s main thread.
    static func afterOutputs(_ player: any PlayerControl) -> CommandResult {
        .deferred(
            DeferredReply(
                holdsIdle: true, begin: { done in player.whenOutputsApplied { done(()) } },
                finish: { _, _ throws(AckError) in .ok }))
    }

    static func outputset(_ context: inout CommandContext) throws(AckError) -> CommandResult {
        let id = try ArgumentParser.unsigned(context.arguments[0])
        let player = context.partition.playlist.player
        guard let output = player.outputs.first(where: { $0.id == Int(id) }) else {
            throw AckError(.noExist, "No such audio output")
        }
        let name = context.arguments[1]
        guard ArgumentParser.isName(name, punctuation: "_") else {
            throw AckError(.arg, "Illegal attribute name")
        }
        // An output that moved to another partition.
        guard !output.isDummy else { throw AckError(.unknown, "Cannot set attribute on dummy output") }
        do {
            _ = try player.setOutputAttribute(id: Int(id), name: name, value: context.arguments[2])
        } catch {
            throw AckError(.arg, error.message)
        }
        context.partition.emit(.output)
        return .ok
    }
}
