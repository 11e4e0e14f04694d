// SPDX-License-Identifier: GPL-3.0-or-later

import MPDProtocol

/// Client-to-client messages: `subscribe`, `unsubscribe`, `channels`, `sendmessage`, `readmessages`.
enum MessageCommands {
    static let all: [Command] = [
        Command("channels", .read, 0, 0, channels),
        Command("readmessages", .read, 0, 0, readmessages),
        Command("sendmessage", .control, 2, 2, sendmessage),
        Command("subscribe", .read, 1, 1, subscribe),
        Command("unsubscribe", .read, 1, 1, unsubscribe),
    ]

    /// How many channels one client may subscribe to.
    static let maximumSubscriptions = 16
    /// How many unread messages one client holds; later ones are dropped.
    static let maximumMessages = 64

    /// `[A-Za-z0-9_.:-]+`.
    static func isValidChannelName(_ name: String) -> Bool { ArgumentParser.isName(name, punctuation: "_.:-") }

    static func subscribe(_ context: inout CommandContext) throws(AckError) -> CommandResult {
        let channel = context.arguments[0]
        guard isValidChannelName(channel) else { throw AckError(.arg, "invalid channel name") }
        let session = context.session
        // mpd checks the limit first: a full list answers "full" even for a channel already held.
        guard session.subscriptions.count < maximumSubscriptions else {
            throw AckError(.exist, "subscription list is full")
        }
        guard !session.subscriptions.contains(channel) else {
            throw AckError(.exist, "already subscribed to this channel")
        }
        session.subscriptions.append(channel)
        context.partition.emit(.subscription)
        return .ok
    }

    static func unsubscribe(_ context: inout CommandContext) throws(AckError) -> CommandResult {
        let session = context.session
        guard let index = session.subscriptions.firstIndex(of: context.arguments[0]) else {
            throw AckError(.noExist, "not subscribed to this channel")
        }
        session.subscriptions.remove(at: index)
        context.partition.emit(.subscription)
        return .ok
    }

    static func channels(_ context: inout CommandContext) throws(AckError) -> CommandResult {
        var names = Set<String>()
        for session in context.services.allSessions where session.partition === context.partition {
            names.formUnion(session.subscriptions)
        }
        for name in names.sorted(by: { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }) {
            context.write("channel", name)
        }
        return .ok
    }

    static func sendmessage(_ context: inout CommandContext) throws(AckError) -> CommandResult {
        let channel = context.arguments[0]
        let text = context.arguments[1]
        guard isValidChannelName(channel) else { throw AckError(.arg, "invalid channel name") }
        var delivered = false
        for session in context.services.allSessions
        where session.partition === context.partition && session.subscriptions.contains(channel) {
            guard session.messages.count < maximumMessages else { continue }
            let wasEmpty = session.messages.isEmpty
            session.messages.append((channel, text))
            delivered = true
            if wasEmpty { session.notifyMessage() }
        }
        guard delivered else { throw AckError(.noExist, "nobody is subscribed to this channel") }
        return .ok
    }

    static func readmessages(_ context: inout CommandContext) throws(AckError) -> CommandResult {
        for message in context.session.messages {
            context.write("channel", message.channel)
            context.write("message", message.text)
        }
        context.session.messages = []
        return .ok
    }
}
