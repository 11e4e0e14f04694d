// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation
import Glibc
import Model
import Synchronization
import Testing

@testable import Zeroconf

/// The real publisher against a private D-Bus bus that comes and goes, with no `avahi-daemon` on it (the
/// conformance suite runs real daemons). libdbus reads the system bus address once per process, so the tests
/// share one fixed address and run one at a time.
@Suite(.serialized)
struct ZeroconfPublisherTests {
    private static let directory: String = {
        let path = NSTemporaryDirectory() + "fermata-zeroconf-\(getpid())"
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        setenv("DBUS_SYSTEM_BUS_ADDRESS", "unix:path=\(path)/system_bus_socket", 1)
        return path
    }()

    /// Log lines, collected from any thread.
    private final class Lines: Sendable {
        private let lines = Mutex<[String]>([])
        var all: [String] { self.lines.withLock { $0 } }
        func append(_ line: String) { self.lines.withLock { $0.append(line) } }
        func count(containing text: String) -> Int { self.all.filter { $0.contains(text) }.count }
    }

    private func publisher(_ lines: Lines) -> ZeroconfPublisher {
        _ = Self.directory
        let logger = Logger(label: "zeroconf", threshold: .debug) { lines.append("\($0.name): \($1)") }
        return ZeroconfPublisher(service: ZeroconfService(name: "Fermata test", port: 6600), logger: logger)
    }

    /// Polls `publisher.status` until it is `expected` or `seconds` pass.
    private func wait(
        for expected: ZeroconfPublisher.Status, on publisher: ZeroconfPublisher, seconds: Double
    ) async throws -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if publisher.status == expected { return true }
            try await Task.sleep(for: .milliseconds(50))
        }
        return publisher.status == expected
    }

    /// Starts `dbus-daemon` on the shared address with a policy that allows everything.
    private func startBus() throws -> Process {
        let config = Self.directory + "/bus.conf"
        try """
        <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
         "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
        <busconfig>
          <type>system</type>
          <listen>unix:path=\(Self.directory)/system_bus_socket</listen>
          <auth>EXTERNAL</auth>
          <policy context="default">
            <allow user="*"/>
            <allow own="*"/>
            <allow send_destination="*"/>
            <allow receive_sender="*"/>
          </policy>
        </busconfig>
        """.write(toFile: config, atomically: true, encoding: .utf8)
        let bus = Process()
        bus.executableURL = URL(fileURLWithPath: "/usr/bin/dbus-daemon")
        bus.arguments = ["--config-file=\(config)", "--nofork", "--nopidfile"]
        bus.standardError = FileHandle.nullDevice
        try bus.run()
        return bus
    }

    /// SIGKILL, since Foundation starts children with the test thread's signal mask, which blocks SIGTERM.
    private func kill(_ process: Process) {
        _ = Glibc.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    @Test func stopWithoutStartDoesNothing() {
        let lines = Lines()
        let publisher = self.publisher(lines)
        publisher.stop()
        #expect(publisher.status == .stopped)
        #expect(lines.all.isEmpty)
    }

    @Test func survivesTheBusComingAndGoing() async throws {
        let lines = Lines()
        let publisher = self.publisher(lines)
        publisher.start()
        defer { publisher.stop() }

        // No bus yet: reported once, retried in the background.
        #expect(try await self.wait(for: .waitingForBus, on: publisher, seconds: 2))
        try await Task.sleep(for: .milliseconds(Double(PublisherStateMachine.busRetryDelay) * 1.5))
        #expect(lines.count(containing: "cannot reach the D-Bus system bus") == 1)

        // The bus appears, without avahi-daemon: the client waits on it (AVAHI_CLIENT_NO_FAIL).
        let bus = try self.startBus()
        var busRunning = true
        defer { if busRunning { self.kill(bus) } }
        #expect(try await self.wait(for: .waitingForDaemon, on: publisher, seconds: 5))
        #expect(lines.count(containing: "avahi-daemon is not running") == 1)

        // The bus goes away: the dead client is replaced and the publisher waits for the bus again.
        self.kill(bus)
        busRunning = false
        #expect(try await self.wait(for: .waitingForBus, on: publisher, seconds: 5))
        #expect(lines.count(containing: "lost the connection to avahi-daemon") == 1)
        #expect(lines.count(containing: "cannot reach the D-Bus system bus") == 2)

        publisher.stop()
        #expect(publisher.status == .stopped)
        #expect(lines.count(containing: "published") == 0)
        #expect(lines.count(containing: "withdrawn") == 0)
    }
}
