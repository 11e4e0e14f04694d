// SPDX-License-Identifier: GPL-3.0-or-later

import Glibc
import Posix

/// What Fermata announces over DNS-SD: a service (`_mpd._tcp`, or an output's own such as the snapcast output's
/// `_snapcast._tcp`) with a name and the port clients connect to.
///
/// A value type; safe from any thread.
public struct ZeroconfService: Sendable, Hashable {
    /// The DNS-SD service type of the MPD protocol.
    public static let mpdType = "_mpd._tcp"

    /// `zeroconf_name`'s default, as in `mpd`.
    public static let defaultNameTemplate = "Music Player @ %h"

    /// The longest service name DNS-SD allows, in UTF-8 bytes (one DNS label).
    public static let maximumNameBytes = 63

    /// Where the service is announced.
    public enum Scope: Sendable, Hashable {
        /// On every interface and protocol Avahi serves (`AVAHI_IF_UNSPEC`, `AVAHI_PROTO_UNSPEC`).
        case everywhere
        /// Only on the loopback interface: every TCP listener is bound to a loopback address, so a client on
        /// another host could not connect anyway.
        case loopback
    }

    /// The instance name browsers show, for example `Music Player @ den`.
    public var name: String
    /// The TCP port clients connect to.
    public var port: UInt16
    /// Where the service is announced.
    public var scope: Scope
    /// The DNS-SD service type.
    public var type: String

    /// Creates a service from its parts.
    public init(name: String, port: UInt16, scope: Scope = .everywhere, type: String = ZeroconfService.mpdType) {
        self.name = name
        self.port = port
        self.scope = scope
        self.type = type
    }

    /// The service for a server listening on `listeners`, or `nil` when none of them is a TCP socket (Unix
    /// sockets only), in which case nothing is published.
    ///
    /// - Parameters:
    ///   - nameTemplate: `zeroconf_name`; its first `%h` becomes `hostName`, as in `mpd`.
    ///   - hostName: the machine's host name (``currentHostName()``).
    ///   - listeners: the addresses the server has bound.
    ///   - preferredPort: the `port` setting; published when a TCP listener uses it, else the first TCP
    ///     listener's port is.
    ///   - type: the service type.
    public init?(
        nameTemplate: String, hostName: String, listeners: [SocketAddress], preferredPort: UInt16,
        type: String = ZeroconfService.mpdType
    ) {
        let tcp = listeners.filter { $0.port != nil }
        guard let first = tcp.first?.port else { return nil }
        self.type = type
        self.name = Self.name(template: nameTemplate, hostName: hostName)
        self.port = tcp.contains { $0.port == preferredPort } ? preferredPort : first
        self.scope = tcp.allSatisfy(Self.isLoopback) ? .loopback : .everywhere
    }

    /// `template` with its first `%h` replaced by `hostName`, cut to ``maximumNameBytes`` at a character
    /// boundary; the default template when that leaves nothing.
    public static func name(template: String, hostName: String) -> String {
        var name = template
        if let start = name.indices.first(where: { name[$0...].hasPrefix("%h") }) {
            name.replaceSubrange(start..<name.index(start, offsetBy: 2), with: hostName)
        }
        while name.utf8.count > Self.maximumNameBytes {
            name.removeLast()
        }
        if name.isEmpty && template != Self.defaultNameTemplate {
            return Self.name(template: Self.defaultNameTemplate, hostName: hostName)
        }
        return name
    }

    /// The host name, as `gethostname(2)` gives it (what `%h` stands for).
    public static func currentHostName() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "localhost" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Whether `address` is on the loopback network (`127.0.0.0/8`, `::1`, or `::ffff:127.x.y.z`).
    static func isLoopback(_ address: SocketAddress) -> Bool {
        switch address {
        case .ipv4(let host, _): host.hasPrefix("127.")
        case .ipv6(let host, _): host == "::1" || host.lowercased().hasPrefix("::ffff:127.")
        case .unix, .abstract: false
        }
    }
}
