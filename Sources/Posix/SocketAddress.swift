// SPDX-License-Identifier: GPL-3.0-or-later

import CLinux
import Glibc
import RawText

/// A socket address: IPv4, IPv6, a Unix socket path or a Linux abstract socket name.
public enum SocketAddress: Hashable, Sendable, CustomStringConvertible {
    /// An IPv4 address and port; `host` is the dotted quad.
    case ipv4(host: String, port: UInt16)
    /// An IPv6 address and port; `host` is the textual address without brackets.
    case ipv6(host: String, port: UInt16)
    /// A Unix-domain socket at a path in the file system.
    case unix(path: String)
    /// A Linux abstract Unix-domain socket (shown as `@name`).
    case abstract(name: String)

    /// `1.2.3.4:6600`, `[::1]:6600`, `/path` or `@name`.
    public var description: String {
        switch self {
        case .ipv4(let host, let port): "\(host):\(port)"
        case .ipv6(let host, let port): "[\(host)]:\(port)"
        case .unix(let path): path
        case .abstract(let name): "@\(name)"
        }
    }

    /// Whether this is a local (Unix-domain) address, whose clients `mpd` treats as local.
    public var isLocal: Bool {
        switch self {
        case .unix, .abstract: true
        case .ipv4, .ipv6: false
        }
    }

    /// The TCP port, for IP addresses.
    public var port: UInt16? {
        switch self {
        case .ipv4(_, let port), .ipv6(_, let port): port
        case .unix, .abstract: nil
        }
    }

    /// The numeric host, as `mpd` compares addresses in `host_permissions`: `127.0.0.1`, `::1`; an IPv4
    /// address mapped into IPv6 (`::ffff:1.2.3.4`) is given as IPv4. `nil` for Unix-domain addresses.
    public var numericHost: String? {
        switch self {
        case .ipv4(let host, _): host
        case .ipv6(let host, _):
            host.lowercased().hasPrefix("::ffff:") && host.contains(".") ? String(host.dropFirst(7)) : host
        case .unix, .abstract: nil
        }
    }

    /// The C address family (`AF_INET`, `AF_INET6`, `AF_UNIX`).
    public var family: Int32 {
        switch self {
        case .ipv4: AF_INET
        case .ipv6: AF_INET6
        case .unix, .abstract: AF_UNIX
        }
    }

    /// The wildcard IPv4 address on `port`.
    public static func anyIPv4(port: UInt16) -> SocketAddress { .ipv4(host: "0.0.0.0", port: port) }

    /// The wildcard IPv6 address on `port`.
    public static func anyIPv6(port: UInt16) -> SocketAddress { .ipv6(host: "::", port: port) }

    /// Calls `body` with the C representation of this address.
    ///
    /// - Throws: `SocketAddressError` when the address text is not numeric or a path is too long.
    public func withSockAddr<R>(
        _ body: (UnsafePointer<sockaddr>, socklen_t) throws -> R
    ) throws -> R {
        switch self {
        case .ipv4(let host, let port):
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = port.bigEndian
            guard inet_pton(AF_INET, host, &address.sin_addr) == 1 else { throw SocketAddressError.badAddress(host) }
            return try withUnsafePointer(to: &address) {
                try $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    try body($0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        case .ipv6(let host, let port):
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = port.bigEndian
            guard inet_pton(AF_INET6, host, &address.sin6_addr) == 1 else { throw SocketAddressError.badAddress(host) }
            return try withUnsafePointer(to: &address) {
                try $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    try body($0, socklen_t(MemoryLayout<sockaddr_in6>.size))
                }
            }
        case .unix(let path):
            return try Self.withUnixAddress(bytes: RawText.encode(path), leadingNul: false, body)
        case .abstract(let name):
            return try Self.withUnixAddress(bytes: RawText.encode(name), leadingNul: true, body)
        }
    }

    private static func withUnixAddress<R>(
        bytes: [UInt8], leadingNul: Bool, _ body: (UnsafePointer<sockaddr>, socklen_t) throws -> R
    ) throws -> R {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        let offset = leadingNul ? 1 : 0
        // A path needs room for its NUL terminator; an abstract name has a leading NUL instead.
        guard bytes.count + 1 <= capacity else { throw SocketAddressError.pathTooLong(RawText.decode(bytes)) }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in bytes.enumerated() { raw[index + offset] = byte }
        }
        let pathOffset = MemoryLayout<sockaddr_un>.offset(of: \.sun_path)!
        let length = leadingNul ? pathOffset + 1 + bytes.count : pathOffset + bytes.count + 1
        return try withUnsafePointer(to: &address) {
            try $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { try body($0, socklen_t(length)) }
        }
    }

    /// Decodes a C socket address, as returned by `accept` or `getsockname`.
    public init?(storage: UnsafeRawPointer, length: socklen_t) {
        let family = Int32(storage.load(as: sa_family_t.self))
        switch family {
        case AF_INET:
            let address = storage.load(as: sockaddr_in.self)
            var text = [CChar](repeating: 0, count: Int(INET_ADDRSTRLEN))
            var inAddr = address.sin_addr
            inet_ntop(AF_INET, &inAddr, &text, socklen_t(text.count))
            self = .ipv4(host: Self.string(text), port: UInt16(bigEndian: address.sin_port))
        case AF_INET6:
            let address = storage.load(as: sockaddr_in6.self)
            var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
            var inAddr = address.sin6_addr
            inet_ntop(AF_INET6, &inAddr, &text, socklen_t(text.count))
            self = .ipv6(host: Self.string(text), port: UInt16(bigEndian: address.sin6_port))
        case AF_UNIX:
            let pathOffset = MemoryLayout<sockaddr_un>.offset(of: \.sun_path)!
            let pathLength = Int(length) - pathOffset
            if pathLength <= 0 {
                self = .unix(path: "")
                return
            }
            let bytes = UnsafeRawBufferPointer(start: storage + pathOffset, count: pathLength)
            if bytes[0] == 0 {
                self = .abstract(name: RawText.decode(bytes.dropFirst()))
            } else {
                self = .unix(path: RawText.decode(bytes.prefix(while: { $0 != 0 })))
            }
        default:
            return nil
        }
    }

    private static func string(_ text: [CChar]) -> String {
        String(decoding: text.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Resolves a host name or numeric address to the addresses a passive (listening) socket can bind.
    ///
    /// The corresponding C function is `getaddrinfo` with `AI_PASSIVE`.
    /// - Throws: `SocketAddressError.resolve` with `gai_strerror`'s text.
    public static func resolve(host: String, port: UInt16) throws -> [SocketAddress] {
        try Self.resolve(host: host, service: String(port))
    }

    /// Resolves a host name or numeric address and a service (a port number, or a name `/etc/services` lists) to
    /// the addresses a passive (listening) socket can bind, as `mpd` resolves `bind_to_address`'s `HOST:PORT`;
    /// without a host, the wildcard addresses.
    ///
    /// The corresponding C function is `getaddrinfo` with `AI_PASSIVE`.
    /// - Throws: `SocketAddressError.resolve` with `gai_strerror`'s text.
    public static func resolve(host: String?, service: String) throws -> [SocketAddress] {
        var hints = addrinfo()
        hints.ai_flags = AI_PASSIVE | AI_ADDRCONFIG
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var result: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, service, &hints, &result)
        guard status == 0 else {
            throw SocketAddressError.resolve(
                host: host ?? "", service: service, message: String(cString: gai_strerror(status)))
        }
        defer { freeaddrinfo(result) }
        var addresses: [SocketAddress] = []
        var cursor = result
        while let info = cursor {
            if let address = SocketAddress(storage: info.pointee.ai_addr, length: info.pointee.ai_addrlen),
                !addresses.contains(address)
            {
                addresses.append(address)
            }
            cursor = info.pointee.ai_next
        }
        return addresses
    }
}

/// Why a socket address could not be built.
public enum SocketAddressError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The text is not a numeric address of the family.
    case badAddress(String)
    /// A Unix socket path longer than `sun_path` holds.
    case pathTooLong(String)
    /// Resolving a host and service failed (`message`: `gai_strerror`'s).
    case resolve(host: String, service: String, message: String)

    /// A one-line explanation.
    public var description: String {
        switch self {
        case .badAddress(let text): "bad address: \(text)"
        case .pathTooLong(let path): "socket path too long: \(path)"
        case .resolve(let host, let service, let message): "Failed to resolve '\(host)':'\(service)': \(message)"
        }
    }
}
