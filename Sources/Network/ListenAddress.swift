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

    /// Parses a `bind_to_address` value as `mpd` does: `any`, a path (`/`, `~/`), `@name`, or a host with an optional
    /// port, split as `mpd`'s `ExtractHost` splits it (a host name of letters, digits, `-`, `.` and `*`; an IPv6
    /// address, bare with two colons or more or in brackets, with an optional `%scope`).
    ///
    /// A port that is not a number from 1 to 65535 (a service name, `0`, a larger number) is resolved now, as
    /// `getaddrinfo` reads it for `mpd`.
    ///
    /// - Parameters:
    ///   - text: the setting's value.
    ///   - defaultPort: the `port` setting, used when the value names no port.
    ///   - home: the home directory that `~/` expands to.
    /// - Throws: `ListenAddressError` with `mpd`'s reason: no host name to extract, one too long, something after
    ///   it but a port, a port that does not resolve.
    public init(parsing text: String, defaultPort: UInt16, home: String) throws(ListenAddressError) {
        if text == "any" {
            self = .any(port: defaultPort)
        } else if text.hasPrefix("/") {
            self = .unix(path: text)
        } else if text.hasPrefix("~/") {
            self = .unix(path: home + String(text.dropFirst(1)))
        } else if text.hasPrefix("@") {
            self = .abstract(name: String(text.dropFirst()))
        } else {
            let (host, service) = try Self.split(text)
            if let service {
                self = .host(host, port: try Self.port(service, host: host))
            } else {
                self = .host(host, port: defaultPort)
            }
        }
    }

    /// `HOST[:PORT]` split as `mpd` splits it (`ExtractHost`): the host, and the port when one follows. No I/O.
    ///
    /// - Throws: `ListenAddressError` with `mpd`'s reason.
    public static func split(_ text: String) throws(ListenAddressError) -> (host: String, service: String?) {
        let bytes = Array(text.utf8)
        guard let (host, end) = Self.extractHost(bytes) else { throw .extractHost }
        guard host.count < 256 else { throw .hostTooLong }
        let hostName = String(decoding: host, as: UTF8.self)
        let rest = bytes[end...]
        if rest.isEmpty { return (hostName, nil) }
        guard rest.first == UInt8(ascii: ":") else { throw .garbageAfterHost }
        return (hostName, String(decoding: rest.dropFirst(), as: UTF8.self))
    }

    /// The addresses `HOST[:PORT]` resolves to (`defaultPort` without a port), as `mpd` resolves a host it is given
    /// (`host_permissions`'s: `Failed to resolve 'HOST':'0': …`).
    ///
    /// - Throws: `ListenAddressError` with `mpd`'s reason.
    public static func resolve(hostAndPort text: String, defaultPort: UInt16) throws(ListenAddressError)
        -> [SocketAddress]
    {
        let (host, service) = try Self.split(text)
        return try Self.resolve(host: host, service: service ?? String(defaultPort))
    }

    /// `SocketAddress.resolve` for a split host (`*`: every address), its failure in `mpd`'s words.
    private static func resolve(host: String, service: String) throws(ListenAddressError) -> [SocketAddress] {
        do {
            return try SocketAddress.resolve(host: Self.node(host), service: service)
        } catch {
            throw .resolve("\(error)")
        }
    }

    /// `service` as a port: a number from 1 to 65535, or what `getaddrinfo` makes of it for `host`.
    private static func port(_ service: String, host: String) throws(ListenAddressError) -> UInt16 {
        if let value = UInt16(service), value > 0 { return value }
        return try Self.resolve(host: host, service: service).lazy.compactMap(\.port).first ?? 0
    }

    /// The host part of `text` and where it ends, as `mpd`'s `ExtractHost` finds them; `nil` when there is none.
    private static func extractHost(_ text: [UInt8]) -> (host: ArraySlice<UInt8>, end: Int)? {
        func isHostByte(_ byte: UInt8) -> Bool {
            Self.isAlphanumeric(byte) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".")
                || byte == UInt8(ascii: "*")
        }
        // An IPv6 address's end from `index`: hex digits and colons, then an optional `%scope`.
        func ipv6End(_ index: Int) -> Int {
            var index = index
            while index < text.count, Self.isHexDigit(text[index]) || text[index] == UInt8(ascii: ":") { index += 1 }
            if index + 1 < text.count, text[index] == UInt8(ascii: "%"), Self.isScopeByte(text[index + 1]) {
                index += 2
                while index < text.count, Self.isScopeByte(text[index]) { index += 1 }
            }
            return index
        }
        guard let first = text.first else { return nil }
        if isHostByte(first) {
            var index = 1
            var colon: Int?
            while index < text.count, isHostByte(text[index]) || text[index] == UInt8(ascii: ":") {
                if text[index] == UInt8(ascii: ":") {
                    // A second colon: an IPv6 address.
                    if colon != nil {
                        let end = ipv6End(index + 1)
                        return (text[0..<end], end)
                    }
                    colon = index
                }
                index += 1
            }
            let end = colon ?? index
            return (text[0..<end], end)
        }
        if text.count > 1, first == UInt8(ascii: ":"), text[1] == UInt8(ascii: ":") {
            let end = ipv6End(2)
            return (text[0..<end], end)
        }
        if first == UInt8(ascii: "[") {
            guard let close = text.firstIndex(of: UInt8(ascii: "]")), close > 1 else { return nil }
            return (text[1..<close], close + 1)
        }
        return nil
    }

    /// The host to resolve: none for `*` (every address, as `mpd` reads a passive `*`).
    private static func node(_ host: String) -> String? { host == "*" ? nil : host }

    private static func isAlphanumeric(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
            || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
            || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(byte)
    }

    private static func isScopeByte(_ byte: UInt8) -> Bool {
        Self.isAlphanumeric(byte) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
    }

    /// The socket addresses to bind. `any` yields the IPv6 and IPv4 wildcards; a host is resolved.
    ///
    /// - Throws: `SocketAddressError.resolve` when the host does not resolve.
    public func socketAddresses() throws -> [SocketAddress] {
        switch self {
        case .any(let port): [.anyIPv6(port: port), .anyIPv4(port: port)]
        case .host(let host, let port): try SocketAddress.resolve(host: Self.node(host), service: String(port))
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

    /// Binds listening sockets on every socket address of `addresses`, as `mpd`'s `ServerSocket` opens them: the
    /// addresses one value resolves to (both wildcards of `any`, each address of a host) are a group, which binds
    /// when one of them does; a failure after one of its addresses bound is passed to `warning` in `mpd`'s words
    /// (`bind to '0.0.0.0:6600' failed (continuing anyway, because binding to '[::]:6600' succeeded): …`), and a group
    /// where none binds fails the whole, with its first failure. Those bound are closed when one fails.
    ///
    /// - Throws: `ListenAddressError.unresolved` naming the value that did not resolve, or `.bind` with `mpd`'s
    ///   message (`Failed to bind to '127.0.0.1:6600'; Failed to bind socket: Address already in use`).
    public static func bind(
        _ addresses: [ListenAddress], warning: (String) -> Void = { _ in }
    ) throws(ListenAddressError) -> [BoundSocket] {
        var sockets: [BoundSocket] = []
        func fail(_ error: ListenAddressError) -> ListenAddressError {
            for socket in sockets { socket.close() }
            return error
        }
        for (index, address) in addresses.enumerated() {
            let socketAddresses: [SocketAddress]
            do {
                socketAddresses = try address.socketAddresses()
            } catch {
                throw fail(.unresolved(index: index, message: "\(error)"))
            }
            var good: SocketAddress?
            var bad: String?
            for socketAddress in socketAddresses {
                do {
                    sockets.append(try BoundSocket.listen(on: socketAddress))
                    good = socketAddress
                    bad = nil
                } catch {
                    if let good {
                        warning(
                            "bind to '\(socketAddress)' failed (continuing anyway, because binding to '\(good)' "
                                + "succeeded): \(Self.reason(error))")
                    } else if bad == nil {
                        bad = "Failed to bind to '\(socketAddress)'; \(Self.reason(error))"
                    }
                }
            }
            if let bad { throw fail(.bind(bad)) }
        }
        return sockets
    }

    /// A socket's failure in `mpd`'s words (`Failed to bind socket: Address already in use`).
    static func reason(_ error: any Error) -> String {
        guard let error = error as? SystemCallError else { return "\(error)" }
        let what =
            switch error.function {
            case "socket": "Failed to create socket"
            case "bind": "Failed to bind socket"
            case "listen": "Failed to listen on socket"
            default: "\(error.function)() failed"
            }
        return "\(what): \(error.errno)"
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

/// Why a `bind_to_address` value is unusable, in `mpd`'s words.
public enum ListenAddressError: Error, Hashable, Sendable, CustomStringConvertible {
    /// No host name at its start (an empty value, `[` without `]`, a character no host name has).
    case extractHost
    /// A host name of 256 bytes or more.
    case hostTooLong
    /// Something after the host name that is not `:PORT`.
    case garbageAfterHost
    /// The port does not resolve (the whole message: `Failed to resolve 'HOST':'PORT': …`).
    case resolve(String)
    /// The value at `index` of those being bound did not resolve (the whole message).
    case unresolved(index: Int, message: String)
    /// Binding failed (the whole message).
    case bind(String)
    /// A stream output's `port` is out of range.
    case invalidPort

    /// A one-line explanation.
    public var description: String {
        switch self {
        case .extractHost: "Failed to extract host name"
        case .hostTooLong: "Host name too long"
        case .garbageAfterHost: "Garbage after host name"
        case .resolve(let message), .bind(let message), .unresolved(_, let message): message
        case .invalidPort: "Invalid TCP port"
        }
    }
}
