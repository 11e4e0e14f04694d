// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation
import Posix
import Testing

@testable import Zeroconf

struct ZeroconfServiceTests {
    @Test(arguments: [
        ("Music Player @ %h", "den", "Music Player @ den"),
        ("%h", "den", "den"),
        ("%h and %h", "den", "den and %h"),
        ("Kitchen", "den", "Kitchen"),
        ("100%", "den", "100%"),
        ("%%h", "den", "%den"),
    ])
    func replacesTheFirstHostNameMarker(template: String, host: String, expected: String) {
        #expect(ZeroconfService.name(template: template, hostName: host) == expected)
    }

    @Test func cutsLongNamesToOneLabelAtACharacterBoundary() {
        let host = String(repeating: "é", count: 40)  // 80 bytes
        let name = ZeroconfService.name(template: "Music Player @ %h", hostName: host)
        #expect(name.utf8.count <= ZeroconfService.maximumNameBytes)
        #expect(name.utf8.count >= ZeroconfService.maximumNameBytes - 1)
        #expect(name.hasPrefix("Music Player @ éé"))
        #expect(name.unicodeScalars.allSatisfy { $0 == "é" || $0.isASCII })
    }

    @Test func anEmptyNameFallsBackToTheDefault() {
        #expect(ZeroconfService.name(template: "", hostName: "den") == "Music Player @ den")
        #expect(ZeroconfService.name(template: "%h", hostName: "") == "Music Player @ ")
    }

    @Test func hostNameIsTheKernels() throws {
        let kernel = try String(contentsOfFile: "/proc/sys/kernel/hostname", encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(ZeroconfService.currentHostName() == kernel)
    }

    @Test func unixSocketsAloneAreNotPublished() {
        let listeners: [SocketAddress] = [.unix(path: "/run/fermata/socket"), .abstract(name: "fermata")]
        #expect(ZeroconfService(nameTemplate: "%h", hostName: "den", listeners: listeners, preferredPort: 6600) == nil)
        #expect(ZeroconfService(nameTemplate: "%h", hostName: "den", listeners: [], preferredPort: 6600) == nil)
    }

    @Test func wildcardListenersArePublishedEverywhere() {
        let service = ZeroconfService(
            nameTemplate: "Music Player @ %h", hostName: "den",
            listeners: [.unix(path: "/tmp/s"), .anyIPv6(port: 6600), .anyIPv4(port: 6600)], preferredPort: 6600)
        #expect(service == ZeroconfService(name: "Music Player @ den", port: 6600, scope: .everywhere))
    }

    @Test func anOutputsServiceHasItsOwnType() {
        // The snapcast output's, as mpd names it: no `%h` in the name.
        let service = ZeroconfService(
            nameTemplate: "Music Player Daemon", hostName: "den", listeners: [.ipv4(host: "127.0.0.1", port: 1704)],
            preferredPort: 1704, type: "_snapcast._tcp")
        #expect(
            service
                == ZeroconfService(name: "Music Player Daemon", port: 1704, scope: .loopback, type: "_snapcast._tcp"))
        #expect(ZeroconfService(name: "x", port: 6600).type == "_mpd._tcp")
    }

    @Test(arguments: [
        [SocketAddress.ipv4(host: "127.0.0.1", port: 6601)],
        [.ipv6(host: "::1", port: 6601)],
        [.ipv4(host: "127.0.1.1", port: 6601), .ipv6(host: "::ffff:127.0.0.1", port: 6601)],
    ])
    func loopbackListenersArePublishedOnLoopbackOnly(listeners: [SocketAddress]) {
        let service = ZeroconfService(nameTemplate: "x", hostName: "den", listeners: listeners, preferredPort: 6600)
        #expect(service?.scope == .loopback)
        #expect(service?.port == 6601)
    }

    @Test func oneReachableAddressMeansEverywhere() {
        let listeners: [SocketAddress] = [.ipv4(host: "127.0.0.1", port: 6600), .ipv4(host: "192.168.1.5", port: 6600)]
        let service = ZeroconfService(nameTemplate: "x", hostName: "den", listeners: listeners, preferredPort: 6600)
        #expect(service?.scope == .everywhere)
    }

    @Test func thePortSettingWinsWhenBound() {
        let listeners: [SocketAddress] = [.ipv6(host: "::1", port: 6602), .ipv4(host: "127.0.0.1", port: 6600)]
        #expect(
            ZeroconfService(nameTemplate: "x", hostName: "h", listeners: listeners, preferredPort: 6600)?.port == 6600)
        #expect(
            ZeroconfService(nameTemplate: "x", hostName: "h", listeners: listeners, preferredPort: 7000)?.port == 6602)
    }

    @Test(arguments: [
        ("Music Player @ den", "Music Player @ den #2"),
        ("Music Player @ den #2", "Music Player @ den #3"),
        ("Music Player @ den #9", "Music Player @ den #10"),
    ])
    func alternativeNamesAreAvahis(name: String, expected: String) {
        #expect(AvahiName.alternative(name) == expected)
    }

    @Test func alternativeNamesStayWithinOneLabel() {
        let long = String(repeating: "a", count: ZeroconfService.maximumNameBytes)
        let next = AvahiName.alternative(long)
        #expect(next.utf8.count <= ZeroconfService.maximumNameBytes)
        #expect(next.hasSuffix(" #2"))
    }
}
