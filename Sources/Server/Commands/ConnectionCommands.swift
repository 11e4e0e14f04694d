// SPDX-License-Identifier: GPL-3.0-or-later

import MPDProtocol
import Model
import Network

/// Connection and reflection commands: `ping`, `close`, `kill`, `password`, `binarylimit`, `tagtypes`,
/// `commands`, `notcommands`, `idle`, `decoders`, `urlhandlers`.
enum ConnectionCommands {
    static let all: [Command] = [
        Command("binarylimit", [], 1, 1, binarylimit),
        Command("close", [], nil, nil) { _ in .close },
        Command("commands", [], 0, 0, commands),
        Command("decoders", .read, 0, 0, decoders),
        Command("idle", .read, 0, nil, idle),
        Command("kill", .admin, nil, nil) { _ in .kill },
        Command("notcommands", [], 0, 0, notcommands),
        Command("urlhandlers", .read, 0, 0, urlhandlers),
        Command("password", [], 1, 1, password),
        Command("ping", [], 0, 0) { _ in .ok },
        Command("tagtypes", [], 0, nil, tagtypes),
    ]

    /// The smallest `binarylimit`.
    static let minimumBinaryLimit: UInt64 = 64

    static func binarylimit(_ context: inout CommandContext) throws(AckError) -> CommandResult {
        let text = context.arguments[0]
        let value = try ArgumentParser.unsigned(text)
        if value < Self.minimumBinaryLimit { throw AckError(.arg, "Value too small") }
        // mpd 0.23 allows 12 KiB more than the output buffer limit (measured against 8 MiB and 1000 KiB).
        let maximum = UInt64(context.services.options.maxOutputBufferSize) + 16384 - 4096
        if value > maximum { throw AckError(.arg, "Number too large: \(text)") }
        context.session.binaryLimit = Int(value)
        return .ok
    }

    /// The decoder plugins, their suffixes and MIME types, as `mpd` prints them.
    static func decoders(_ context: inout CommandContext) throws(AckError) -> CommandResult {
        var text = ""
        for decoder in context.services.options.decoders {
            text += "plugin: \(decoder.name)\n"
            for suffix in decoder.suffixes { text += "suffix: \(suffix)\n" }
            for mimeType in decoder.mimeTypes { text += "mime_type: \(mimeType)\n" }
        }
        context.write(raw: text)
        return .ok
    }

    /// The URI schemes songs may use: `file://` for local clients (as in `mpd`), then those of the input
    /// plugins.
    static func urlhandlers(_ context: inout CommandContext) throws(AckError) -> CommandResult {
        if context.session.isLocal { context.write("handler", "file://") }
        for scheme in context.services.options.remoteSchemes { context.write("handler", scheme) }
        return .ok
    }

    static func commands(_ context: inout CommandContext) throws(AckError) -> CommandResult {
        for command in context.services.commands.entries
        where context.session.permissions.isSuperset(of: command.permission) && command.isAvailable(context.services) {
            context.write("command", command.name)
        }
        return .ok
    }

    static func notcommands(_ context: inout CommandContext) throws(AckError) -> CommandResult {
        for command in context.services.commands.entries
        where !context.session.permissions.isSuperset(of: command.permission) {
            context.write("command", command.name)
        }
        return .ok
    }

    static func idle(_ context: inout CommandContext) throws(AckError) -> CommandResult {
        if context.arguments.isEmpty { return .idle(.all) }
        var mask: IdleMask = []
        for name in context.arguments {
            guard let event = IdleEvent(parsing: name) else {
                throw AckError(.arg, "Unrecognized idle event: \(name)")
            }
            mask.insert(IdleMask(event))
        }
        return .idle(mask)
    }

    static func password(_ context: inout CommandContext) throws(AckError) -> CommandResult {
        guard let granted = context.services.options.passwords[context.arguments[0]] else {
            throw AckError(.password, "incorrect password")
        }
        context.session.permissions = granted
        return .ok
    }

    static func tagtypes(_ context: inout CommandContext) throws(AckError) -> CommandResult {
        let arguments = context.arguments
        guard let subcommand = arguments.first else {
            let visible = context.services.options.metadataToUse.intersection(context.session.tagMask)
            for tag in visible { context.write("tagtype", tag.name) }
            return .ok
        }
        switch subcommand {
        case "clear", "all":
            guard arguments.count == 1 else { throw AckError(.arg, "Too many arguments") }
            context.session.tagMask = subcommand == "all" ? .all : .none
        case "enable", "disable":
            guard arguments.count > 1 else { throw AckError(.arg, "Not enough arguments") }
            // Every name is checked before any is applied, as in mpd.
            var tags: [TagType] = []
            for name in arguments.dropFirst() {
                guard let tag = TagType(parsing: name) else { throw AckError(.arg, "Unknown tag type") }
                tags.append(tag)
            }
            for tag in tags {
                if subcommand == "enable" {
                    context.session.tagMask.insert(tag)
                } else {
                    context.session.tagMask.remove(tag)
                }
            }
        default:
            throw AckError(.arg, "Unknown sub command")
        }
        return .ok
    }
}
