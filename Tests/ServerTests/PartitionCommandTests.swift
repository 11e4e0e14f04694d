// SPDX-License-Identifier: GPL-3.0-or-later

import Server
import TestSupport
import Testing

/// `newpartition`, `partition`, `listpartitions`, `delpartition`, `moveoutput` on a server whose default
/// partition has one null output (a scripted player; new partitions get one without outputs).
@Suite struct PartitionCommandTests {
    let server: TestServer
    let client: LoopbackClient

    init() throws {
        self.server = try TestServer()
        self.client = try LoopbackClient(port: self.server.port)
        _ = self.client.readLine()
    }

    private func request(_ line: String) -> [String] { self.client.request(line) }

    private func status(_ key: String, _ client: LoopbackClient? = nil) -> String? {
        (client ?? self.client).request("status").first { $0.hasPrefix(key + ": ") }
            .map { String($0.dropFirst(key.count + 2)) }
    }

    @Test func namesLimitsAndErrors() {
        defer { self.server.stop() }
        #expect(self.request("listpartitions") == ["partition: default", "OK"])
        #expect(self.request("newpartition p-1_X") == ["OK"])
        #expect(self.request("newpartition p-1_X") == ["ACK [56@0] {newpartition} name already exists"])
        #expect(self.request("newpartition a.b") == ["ACK [2@0] {newpartition} bad name"])
        #expect(self.request("newpartition \"\"") == ["ACK [2@0] {newpartition} bad name"])
        #expect(self.request("partition nope") == ["ACK [50@0] {partition} partition does not exist"])
        for index in 2..<16 { #expect(self.request("newpartition p\(index)") == ["OK"]) }
        #expect(self.request("newpartition p16") == ["ACK [5@0] {newpartition} too many partitions"])
        #expect(self.request("listpartitions").count == 17)
        #expect(
            self.request("delpartition default") == ["ACK [5@0] {delpartition} cannot delete the default partition"])
        #expect(self.request("delpartition zz") == ["ACK [50@0] {delpartition} no such partition"])
        #expect(self.request("delpartition p2") == ["OK"])
        #expect(!self.request("listpartitions").contains("partition: p2"))
    }

    @Test func eachPartitionHasItsOwnQueueModesAndStatusLine() {
        defer { self.server.stop() }
        #expect(self.request("newpartition p1") == ["OK"])
        #expect(self.request("partition p1") == ["OK"])
        #expect(self.status("partition") == "p1")
        #expect(self.request("repeat 1") == ["OK"])
        // No output, so no mixer.
        #expect(self.status("volume") == nil)
        #expect(self.request("setvol 10") == ["ACK [5@0] {setvol} No mixer"])
        #expect(self.request("outputs") == ["OK"])
        #expect(self.request("partition default") == ["OK"])
        #expect(self.status("partition") == "default")
        #expect(self.status("repeat") == "0")
        #expect(self.status("volume") == "100")
    }

    @Test func moveoutputLeavesADummyAndComesBack() {
        defer { self.server.stop() }
        _ = self.request("newpartition p1")
        _ = self.request("partition p1")
        #expect(self.request("moveoutput Nope") == ["ACK [50@0] {moveoutput} No such output"])
        #expect(self.request("moveoutput \"Null Output\"") == ["OK"])
        #expect(
            self.request("outputs") == [
                "outputid: 0", "outputname: Null Output", "plugin: null", "outputenabled: 1", "OK",
            ])
        // Already here: nothing to do.
        #expect(self.request("moveoutput \"Null Output\"") == ["OK"])
        #expect(self.request("delpartition p1") == ["ACK [5@0] {delpartition} partition still has clients"])
        _ = self.request("partition default")
        #expect(
            self.request("outputs") == [
                "outputid: 0", "outputname: Null Output", "plugin: dummy", "outputenabled: 0", "OK",
            ])
        #expect(
            self.request("outputset 0 dop 1") == [
                "ACK [5@0] {outputset} Cannot set attribute on dummy output"
            ])
        #expect(self.request("delpartition p1") == ["ACK [5@0] {delpartition} partition still has outputs"])
        #expect(self.request("moveoutput \"Null Output\"") == ["OK"])
        #expect(
            self.request("outputs") == [
                "outputid: 0", "outputname: Null Output", "plugin: null", "outputenabled: 1", "OK",
            ])
        // Only its dummy is left in p1.
        #expect(self.request("delpartition p1") == ["OK"])
    }

    @Test func idleEventsReachThePartitionsMpdRaisesThemIn() throws {
        defer { self.server.stop() }
        _ = self.request("newpartition p1")
        _ = self.request("partition p1")
        let other = try LoopbackClient(port: self.server.port)
        _ = other.readLine()
        // The queue's modes are the partition's own: the client in `default` hears nothing.
        other.send("idle\n")
        _ = self.request("repeat 1")
        _ = self.request("ping")
        // crossfade is raised for every client, as mpd 0.23's player control raises it.
        _ = self.request("crossfade 3")
        #expect(other.readReply() == ["changed: options", "OK"])
        // A partition's subscriptions and messages stay in it.
        other.send("idle\n")
        _ = self.request("subscribe c")
        _ = self.request("newpartition p2")
        #expect(other.readReply() == ["changed: partition", "OK"])
        #expect(other.request("channels") == ["OK"])
    }

    @Test func switchingMarksThePartitionsEventsWithoutWaking() {
        defer { self.server.stop() }
        _ = self.request("newpartition p1")
        #expect(self.request("command_list_begin\npartition p1\nstatus\ncommand_list_end").contains("partition: p1"))
        #expect(
            self.request("idle") == [
                "changed: playlist", "changed: player", "changed: mixer", "changed: output", "changed: options",
                "changed: partition", "OK",
            ])
    }
}
