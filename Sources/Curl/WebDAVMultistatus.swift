// SPDX-License-Identifier: GPL-3.0-or-later

import CCurl
import Expat
import Glibc

/// What `mpd`'s curl storage keeps of one `<D:response>` of a WebDAV multistatus body: its `href` (as sent,
/// still escaped), the status of its `propstat`, whether `resourcetype` names a `collection`, `getlastmodified`
/// and `getcontentlength`.
public struct WebDAVResource: Sendable, Hashable {
    /// The `href`'s character data, as sent.
    public var href: [UInt8] = []
    /// The number after the first space of the `status` (`HTTP/1.1 200 OK`); 0 when there is none.
    public var status = 0
    /// `resourcetype` holds a `collection`: a directory.
    public var isCollection = false
    /// `getlastmodified` as libcurl's `curl_getdate` reads it (-1 when it cannot), seconds since the epoch;
    /// `nil` without one.
    public var modificationTime: Int64?
    /// `getcontentlength` as C's `strtoull` reads it; 0 without one.
    public var length: UInt64 = 0

    /// An empty resource.
    public init() {}
}

/// The state machine `mpd`'s `PropfindOperation` runs over the expat events of a multistatus body (element names
/// in expat's namespace form, `DAV:|response`). It keeps its quirks, which decide what a listing shows:
///
/// - `response` is looked for at any depth; `href` only directly in a `response`, the properties only in a
///   `propstat`.
/// - A resource is finished at the end of each `propstat`, and only when an `href` came before it; the next
///   `propstat` of the same `response` starts from nothing (no `href`): only the first `propstat` counts.
/// - Character data is taken piece by piece as expat reports it: `href` pieces are joined, but each piece of
///   `status`, `getlastmodified` or `getcontentlength` replaces the last (a `status` ending in a line break,
///   which expat reports as a piece of its own, reads as status 0).
///
/// Pure; confined to one thread at a time.
public struct PropfindParser: Sendable {
    private enum State {
        case root, response, propstat, href, status, type, modificationTime, length
    }

    private var state = State.root
    private var current = WebDAVResource()
    /// The resources finished so far, in document order.
    public private(set) var resources: [WebDAVResource] = []

    /// A parser at the document's start.
    public init() {}

    /// Takes one event of the document.
    public mutating func consume(_ event: XMLEvent) {
        switch event {
        case .start(let name, _): self.start(name)
        case .end(let name): self.end(name)
        case .text(let bytes): self.text(bytes)
        }
    }

    private mutating func start(_ name: String) {
        switch self.state {
        case .root:
            if name == "DAV:|response" { self.state = .response }
        case .response:
            if name == "DAV:|propstat" {
                self.state = .propstat
            } else if name == "DAV:|href" {
                self.state = .href
            }
        case .propstat:
            switch name {
            case "DAV:|status": self.state = .status
            case "DAV:|resourcetype": self.state = .type
            case "DAV:|getlastmodified": self.state = .modificationTime
            case "DAV:|getcontentlength": self.state = .length
            default: break
            }
        case .type:
            if name == "DAV:|collection" { self.current.isCollection = true }
        case .href, .status, .modificationTime, .length:
            break
        }
    }

    private mutating func end(_ name: String) {
        switch self.state {
        case .root:
            break
        case .response:
            if name == "DAV:|response" { self.state = .root }
        case .propstat:
            if name == "DAV:|propstat" {
                if !self.current.href.isEmpty { self.resources.append(self.current) }
                self.current = WebDAVResource()
                self.state = .response
            }
        case .href:
            if name == "DAV:|href" { self.state = .response }
        case .status:
            if name == "DAV:|status" { self.state = .propstat }
        case .type:
            if name == "DAV:|resourcetype" { self.state = .propstat }
        case .modificationTime:
            if name == "DAV:|getlastmodified" { self.state = .propstat }
        case .length:
            if name == "DAV:|getcontentlength" { self.state = .propstat }
        }
    }

    private mutating func text(_ bytes: [UInt8]) {
        switch self.state {
        case .root, .response, .propstat, .type:
            break
        case .href:
            self.current.href += bytes
        case .status:
            self.current.status = Self.status(bytes)
        case .modificationTime:
            self.current.modificationTime = Self.date(bytes)
        case .length:
            self.current.length = Self.withCString(bytes) { strtoull($0, nil, 10) }
        }
    }

    /// `strtoul` of what follows the first space, kept in 32 bits as `mpd`'s `unsigned`.
    static func status(_ bytes: [UInt8]) -> Int {
        let text = bytes.prefix { $0 != 0 }
        guard let space = text.firstIndex(of: UInt8(ascii: " ")) else { return 0 }
        let value = Self.withCString(Array(text[(space + 1)...])) { strtoul($0, nil, 10) }
        return Int(UInt32(truncatingIfNeeded: value))
    }

    /// libcurl's `curl_getdate` of `bytes` (-1 when it cannot read them, or libcurl cannot be loaded).
    static func date(_ bytes: [UInt8]) -> Int64 {
        guard let curl = try? CurlLibrary.shared.functions() else { return -1 }
        return Int64(Self.withCString(bytes) { curl.curl_getdate($0, nil) })
    }

    private static func withCString<Result>(_ bytes: [UInt8], _ body: (UnsafePointer<CChar>) -> Result) -> Result {
        (bytes + [0]).withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { body($0.baseAddress!) }
        }
    }
}

/// How `mpd`'s curl storage names what a PROPFIND of Depth 1 lists, and maps a mount's paths to URLs.
///
/// Pure; any thread.
public enum WebDAVPath {
    /// `path` with each `/`-separated segment escaped as libcurl's `curl_easy_escape` does (every byte but ASCII
    /// letters, digits and `-._~` as `%XX`, upper-case hex), `mpd`'s `CurlEscapeUriPath`.
    public static func escape(_ path: String) -> String {
        var out: [UInt8] = []
        let hex = Array("0123456789ABCDEF".utf8)
        for byte in path.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"), UInt8(ascii: "/"):
                out.append(byte)
            default:
                out += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 15)]]
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// `bytes` with each `%XX` (two hex digits) decoded, as libcurl's `curl_easy_unescape`, cut at the first NUL
    /// (`mpd` goes on with the result as a C string).
    public static func unescape(_ bytes: some Collection<UInt8>) -> [UInt8] {
        var out: [UInt8] = []
        var index = bytes.startIndex
        while index != bytes.endIndex {
            let byte = bytes[index]
            index = bytes.index(after: index)
            if byte == UInt8(ascii: "%"), index != bytes.endIndex, let high = Self.hexValue(bytes[index]) {
                let next = bytes.index(after: index)
                if next != bytes.endIndex, let low = Self.hexValue(bytes[next]) {
                    out.append(high << 4 | low)
                    index = bytes.index(after: next)
                    continue
                }
            }
            out.append(byte)
        }
        if let nul = out.firstIndex(of: 0) { out.removeSubrange(nul...) }
        return out
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// The path of a URI as `mpd`'s `uri_get_path` finds it: after `scheme://host` (or `//host`), from the
    /// first slash (`nil` when there is none); a URI without a scheme is all path.
    public static func path(of uri: [UInt8]) -> ArraySlice<UInt8>? {
        var rest: ArraySlice<UInt8>?
        if uri.count > 2, uri[0] == UInt8(ascii: "/"), uri[1] == UInt8(ascii: "/"), uri[2] != UInt8(ascii: "/") {
            rest = uri[2...]
        } else if let colon = uri.firstIndex(of: UInt8(ascii: ":")), Self.isScheme(uri[..<colon]) {
            let after = uri[(colon + 1)...]
            if after.starts(with: "//".utf8) { rest = after.dropFirst(2) }
        }
        guard let rest else { return uri[...] }
        guard let slash = rest.firstIndex(of: UInt8(ascii: "/")) else { return nil }
        return rest[slash...]
    }

    private static func isScheme(_ bytes: ArraySlice<UInt8>) -> Bool {
        guard let first = bytes.first, (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(first) else { return false }
        return bytes.allSatisfy { byte in
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                || byte == UInt8(ascii: "+") || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "-")
        }
    }

    /// The base path a Depth 1 listing of `url` compares each `href` with: the URL's path (`/` when it has none),
    /// unescaped.
    public static func basePath(of url: String) -> [UInt8] {
        Self.unescape(Self.path(of: Array(url.utf8)) ?? Array("/".utf8)[...])
    }

    /// The name a listing entry's `href` gives, as `mpd` finds it: the unescaped `href`'s path after `basePath`
    /// (compared without regard to ASCII case), without a trailing slash; `nil` for the directory itself, for
    /// anything outside it or deeper, and for an `href` without a path.
    public static func name(ofHref href: [UInt8], basePath: [UInt8]) -> [UInt8]? {
        guard let path = Self.path(of: Self.unescape(href)), path.count >= basePath.count else { return nil }
        let prefix = path.prefix(basePath.count)
        guard zip(prefix, basePath).allSatisfy({ Self.lowercased($0) == Self.lowercased($1) }) else { return nil }
        let rest = path.dropFirst(basePath.count)
        guard !rest.isEmpty else { return nil }
        guard let slash = rest.firstIndex(of: UInt8(ascii: "/")) else { return Array(rest) }
        return slash == rest.index(before: rest.endIndex) ? Array(rest[..<slash]) : nil
    }

    private static func lowercased(_ byte: UInt8) -> UInt8 {
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte + 32 : byte
    }
}
