// SPDX-License-Identifier: GPL-3.0-or-later

import MPDProtocol
import Playback

/// Partitions, as `mpd` 0.23: `partition`, `listpartitions`, `newpartition`, `delpartition`, `moveoutput`.
enum PartitionCommands {
    static let all: [Command] = [
        Command("delpartition", .admin, 1, 1, delpartition),
        Command("listpartitions", .read, 0, 0) { context in
            for partition in context.services.partitions.all { context.write("partition", partition.name) }
            return .ok
        },
        Command("moveoutput", .admin, 1, 1, moveoutput),
        Command("newpartition", .admin, 1, 1, newpartition),
        Command("partition", .read, 1, 1) { context throws(AckError) in
            guard let partition = context.services.partitions.named(context.arguments[0]) else {
                throw AckError(.noExist, "partition does not exist")
            }
            let session = context.session
            guard partition !== session.partition else { return .ok }
            session.partition = partition
            // As mpd: the client is told (at its next `idle`, without waking it now) to reload what is the
            // partition's own.
            session.addPendingIdle(Self.partitionEvents)
            return .ok
        },
    ]

    /// What a partition has of its own: the events a client switching partitions is given.
    static let partitionEvents = IdleMask(
        rawValue: [IdleEvent.playlist, .player, .mixer, .output, .options].reduce(0) { $0 | IdleMask($1).rawValue })

    static func newpartition(_ context: inout CommandContext) throws(AckError) -> CommandResult {
        let name = context.arguments[0]
        guard Partition.isValidName(name) else { throw AckError(.arg, "bad name") }
        let partitions = context.services.partitions
        guard partitions.named(name) == nil else { throw AckError(.exist, "name already exists") }
        guard partitions.all.count < PartitionList.maximumCount else {
            throw AckError(.unknown, "too many partitions")
        }
        partitions.add(named: name)
        context.services.emit(.partition)
        return .ok
    }

    static func delpartition(_ context: inout CommandContext) throws(AckError) -> CommandResult {
        let name = context.arguments[0]
        guard Partition.isValidName(name) else { throw AckError(.arg, "bad name") }
        let partitions = context.services.partitions
        guard let partition = partitions.named(name) else { throw AckError(.noExist, "no such partition") }
        guard partition !== partitions.defaultPartition else {
            throw AckError(.unknown, "cannot delete the default partition")
        }
        guard !context.services.allSessions.contains(where: { $0.partition === partition }) else {
            throw AckError(.unknown, "partition still has clients")
        }
        guard partition.player.outputs.allSatisfy({ $0.isDummy }) else {
            throw AckError(.unknown, "partition still has outputs")
        }
        partitions.remove(partition)
        context.services.emit(.partition)
        return .ok
    }

    /// Moves the output named by the argument into the client's partition from the one that has it, leaving a
    /// dummy there; nothing to do when it is here already.
    static func moveoutput(_ context: inout CommandContext) throws(AckError) -> CommandResult {
        switch context.services.partitions.moveOutput(named: context.arguments[0], to: context.partition) {
        case .moved:
            context.services.emit(.output)
            // As mpd: answered once the output left its old partition's thread and applied its flag in this one.
            return OutputCommands.afterOutputs(context.partition.player)
        case .alreadyThere: return .ok
        case .noSuchOutput: throw AckError(.noExist, "No such output")
        }
    }
}
