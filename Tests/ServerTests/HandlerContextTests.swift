// SPDX-License-Identifier: GPL-3.0-or-later

import MPDProtocol
import Model
import Playback
import TestSupport
import Testing

@testable import Server

/// Command handlers run on a context built by hand: a buffer for the reply, partitions over scripted players, the
/// shared services and one client's settings. No socket, no loop, no server.
@Suite struct HandlerContextTests {
    /// A reply kept as text.
    final class Sink: ReplySink {
        var text = ""
        func write(_ text: String) { self.text += text }
        func write(bytes: some Sequence<UInt8>) { self.text += String(decoding: Array(bytes), as: UTF8.self) }
    }

    /// What the handlers see, and the idle events they raised: `(partition name or "*" for every client, event)`.
    final class Harness {
        let sink = Sink()
        var raised: [(String, IdleEvent)] = []
        private(set) var partitions: PartitionList!
        private(set) var services: SharedServices!
        private(set) var session: SessionSettings!
        var pending: IdleMask = []

        init() {
            func partition(_ name: String, _ player: ScriptedPlayer) -> Partition {
                let playlist = Playlist(queue: Queue(maximumLength: 100), player: player, resolvePath: { $0 })
                return Partition(name: name, playlist: playlist) { [unowned self] event, partition in
                    self.raised.append((partition.name, event))
                }
            }
            self.partitions = PartitionList(default: partition("default", ScriptedPlayer())) { name in
                partition(name, ScriptedPlayer(volume: nil, outputs: []))
            }
            let session = SessionSettings(
                permissions: .all, isLocal: false, peerUserID: nil, partition: self.partitions.defaultPartition)
            session.addPendingIdle = { [unowned self] events in self.pending.formUnion(events) }
            self.session = session
            self.services = SharedServices(
                startTime: 0, options: ServerOptions(), logger: .discarding, library: nil, stickers: nil,
                commands: .standard, partitions: self.partitions,
                raise: { [unowned self] event in self.raised.append(("*", event)) },
                sessions: { [unowned self] in [self.session] })
        }

        /// Runs `name` with `arguments` in the client's partition; returns the reply text, `OK` or the ACK line.
        func run(_ name: String, _ arguments: String...) -> String {
            self.sink.text = ""
            guard let command = CommandTable.standard.lookup(name) else { return "unknown" }
            var context = CommandContext(
                arguments: arguments, reply: self.sink, partition: self.session.partition, services: self.services,
                session: self.session)
            do throws(AckError) {
                _ = try command.handler(&context)
                return self.sink.text + "OK\n"
            } catch {
                return error.line(index: 0, command: name) + "\n"
            }
        }
    }

    @Test func statusAndOutputsAreThePartitions() {
        let harness = Harness()
        #expect(harness.run("status").hasPrefix("volume: 100\nrepeat: 0\n"))
        #expect(harness.run("status").contains("partition: default\n"))
        #expect(harness.run("newpartition", "p1") == "OK\n")
        #expect(harness.run("partition", "p1") == "OK\n")
        let status = harness.run("status")
        #expect(!status.contains("volume:") && status.contains("partition: p1\n"))
        #expect(harness.run("outputs") == "OK\n")
        #expect(harness.run("setvol", "10") == "ACK [5@0] {setvol} No mixer\n")
        #expect(harness.run("listpartitions") == "partition: default\npartition: p1\nOK\n")
    }

    @Test func handlersRaiseEventsWhereMpdRaisesThem() {
        let harness = Harness()
        #expect(harness.run("setvol", "40") == "OK\n")
        #expect(harness.run("crossfade", "2") == "OK\n")
        #expect(harness.run("subscribe", "c") == "OK\n")
        #expect(harness.run("newpartition", "p1") == "OK\n")
        #expect(
            harness.raised.map { "\($0.0) \($0.1.name)" } == [
                "default mixer", "* options", "default subscription", "* partition",
            ])
        // Switching marks the partition's own events for this client's next idle, without a wake-up.
        #expect(harness.run("partition", "p1") == "OK\n")
        #expect(harness.pending.events == [.playlist, .player, .mixer, .output, .options])
        #expect(harness.run("delpartition", "p1") == "ACK [5@0] {delpartition} partition still has clients\n")
    }
}
