// SPDX-License-Identifier: GPL-3.0-or-later

import Posix

/// One `bind_to_address` setting, in every form `mpd` accepts.
///
/// - `any`: every interface, IPv4 and IPv6, on the default port;
/// - `host`, `host:port`, `1.2.3.4`, `::1`, `[::1]:6602`: the addresses the host resolves to;
/// - `/path` or `~/path`: a Unix socket;
/// - `@name`: a Linux abstract socket.
public enum ListenAddress: Hashable, Sendable, CustomStringConvertible {
    /// Every interface on `port`.
    case any(port: UInt16)
    /// A host name or numeric address on `port`.
    case host(String, port: UInt16)
    /// A Unix socket path.
    case unix(path: String)
    /// A Linux abstract socket name (without the `@`).
    case abstract(name: String)

    /// Parses a `bind_to_address` value.
    ///
    /// - Parameters:
    ///   - text: the setting's value.
    ///   - defaultPort: the `port` setting, used when the value names no port.
    ///   - home: the home directory that `~/` expands to.
    /// - Throws: `ListenAddressError` for an empty value, a bad port or an unclosed bracket.
    public init(parsing text: String, defaultPort: UInt16, home: String) throws(ListenAddressError) {
        if text.isEmpty { throw .empty }
        if text == "any" {
            self = .any(port: defaultPort)
        } else if text.hasPrefix("/") {
            self = .unix(path: text)
        } else if text.hasPrefix("~/") {
            self = .unix(path: home + String(text.dropFirst(1)))
        } else if text.hasPrefix("@") {
            self = .abstract(name: String(text.dropFirst()))
        } else if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { throw .unclosedBracket(text) }
            let host = String(text[text.index(after: text.startIndex)..<close])
            let rest = text[text.index(after: close)...]
            if rest.isEmpty {
                self = .host(host, port: defaultPort)
            } else {
                guard rest.hasPrefix(":") else { throw .badPort(text) }
                self = .host(host, port: try Self.port(rest.dropFirst(), in: text))
            }
        } else if text.filter({ $0 == ":" }).count == 1, let colon = text.firstIndex(of: ":") {
            let host = String(text[..<colon])
            self = .host(host, port: try Self.port(text[text.index(after: colon)...], in: text))
        } else {
            // No colon, or a bare IPv6 address with several.
            self = .host(text, port: defaultPort)
        }
    }

    private static func port(_ text: Substring, in whole: String) throws(ListenAddressError) -> UInt16 {
        guard let value = UInt16(text), value > 0 else { throw .badPort(whole) }
        return value
    }

    /// The socket addresses to bind. `any` yields the IPv6 and IPv4 wildcards; a host is resolved.
    ///
    /// - Throws: `SocketAddressError.resolve` when the host does not resolve.
    public func socketAddresses() throws -> [SocketAddress] {
        switch self {
        case .any(let port): [.anyIPv6(port: port), .anyIPv4(port: port)]
        case .host(let host, let port): try SocketAddress.resolve(host: host, port: port)
        case .unix(let path): [.unix(path: path)]
        case .abstract(let name): [.abstract(name: name)]
        }
    }

    /// A stream output's listening address (httpd, snapcast): its block's `bind_to_address` (default: every
    /// address) with `port` (default `defaultPort`; 0, the system's pick, only where `allowsPortZero` and with an
    /// address: `mpd`'s `ServerSocket::AddPort`, for no address or `any`, refuses 0).
    ///
    /// - Parameter number: The block's `port`, read as `mpd` reads it (a number of zero or more), or `nil`.
    /// - Throws: `ListenAddressError.invalidPort` for a port out of range (`mpd`'s `Invalid TCP port`), or the
    ///   address's error.
    public static func output(
        bindToAddress: String?, port number: UInt32?, defaultPort: UInt16, allowsPortZero: Bool, home: String
    ) throws(ListenAddressError) -> ListenAddress {
        var port = defaultPort
        let everyAddress = bindToAddress == nil || bindToAddress == "any"
        if let number {
            guard let value = UInt16(exactly: number), value > 0 || allowsPortZero && !everyAddress else {
                throw .invalidPort
            }
            port = value
        }
        guard let bindToAddress else { return .any(port: port) }
        return try ListenAddress(parsing: bindToAddress, defaultPort: port, home: home)
    }

    /// The TCP port, `nil` for a local socket.
    public var port: UInt16? {
        switch self {
        case .any(let port), .host(_, let port): port
        case .unix, .abstract: nil
        }
    }

    /// Binds listening sockets on every socket address of `addresses` (a stream output's `bind_to_address`);
    /// those bound are closed when one fails.
    ///
    /// - Throws: `ListenAddressError.bind` with `mpd`'s message (`Failed to bind to 'ADDRESS': …`).
    public static func bindAll(_ addresses: [ListenAddress]) throws(ListenAddressError) -> [BoundSocket] {
        var sockets: [BoundSocket] = []
        do {
            for address in addresses {
                for socketAddress in try address.socketAddresses() {
                    sockets.append(try BoundSocket.listen(on: socketAddress))
                }
            }
        } catch {
            for socket in sockets { socket.close() }
            throw .bind("Failed to bind to '\(addresses.map(\.description).joined(separator: ", "))': \(error)")
        }
        return sockets
    }

    /// The value as a user would write it.
    public var description: String {
        switch self {
        case .any(let port): "any:\(port)"
        case .host(let host, let port): host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        case .unix(let path): path
        case .abstract(let name): "@\(name)"
        }
    }
}

/// Why a `bind_to_address` value is unusable.
public enum ListenAddressError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The value is empty.
    case empty
    /// The port part is not a number from 1 to 65535.
    case badPort(String)
    /// `[` without `]`.
    case unclosedBracket(String)
    /// Binding failed (the whole message).
    case bind(String)
    /// A stream output's `port` is out of range.
    case invalidPort

    /// A one-line explanation.
    public var description: String {
        switch self {
        case .empty: "empty bind_to_address"
        case .badPort(let text): "bad port in bind_to_address: \(text)"
        case .unclosedBracket(let text): "missing ']' in bind_to_address: \(text)"
        case .bind(let message): message
        case .invalidPort: "Invalid TCP port"
        }
    }
}
