// SPDX-License-Identifier: GPL-3.0-or-later

/// The header lines of the response being received, collected as `mpd`'s `CurlResponseHandlerAdapter` collects
/// them: names lowercased, values stripped of surrounding white space, everything dropped at each new status
/// line (the next response after a redirect or a `100 Continue`).
///
/// Pure; confined to the transfer's thread.
struct CurlResponseHeaders {
    /// The status of the last status line (`HTTP/1.1 200 OK`, `ICY 200 OK`), 0 before one.
    private(set) var status = 0
    /// The headers of the current response in arrival order, values as sent (bytes: `icy-name` may be in any
    /// character set); repeated names are kept.
    private(set) var fields: [(name: String, value: [UInt8])] = []

    /// What a header line was.
    enum Line: Equatable {
        /// A status line: a new response starts.
        case status
        /// A `name: value` field (or a line without a colon, which is ignored).
        case field
        /// The empty line that ends the response's headers.
        case end
    }

    /// Takes one line as libcurl hands it to the header callback (with its CR LF).
    mutating func add(_ line: UnsafeRawBufferPointer) -> Line {
        // `mpd`'s IsResponseBoundaryHeader: longer than 5 bytes, starting with `HTTP/` or `ICY 2`.
        if line.count > 5, line.starts(with: "HTTP/".utf8) || line.starts(with: "ICY 2".utf8) {
            self.fields.removeAll(keepingCapacity: true)
            self.status = Self.statusCode(line)
            return .status
        }
        var end = line.count
        while end > 0, line[end - 1] <= 0x20 { end -= 1 }
        if end == 0 { return .end }
        guard let colon = line[0..<end].firstIndex(of: 0x3A) else { return .field }
        var start = colon + 1
        while start < end, line[start] <= 0x20 { start += 1 }
        let name = String(decoding: line[0..<colon].map { $0 >= 0x41 && $0 <= 0x5A ? $0 + 0x20 : $0 }, as: UTF8.self)
        self.fields.append((name, Array(line[start..<end])))
        return .field
    }

    /// The first value of the header `name` (lowercase), as `mpd`'s `multimap::find` returns it.
    func value(_ name: String) -> String? {
        self.bytes(name).map { String(decoding: $0, as: UTF8.self) }
    }

    /// The first value of the header `name` (lowercase), as sent.
    func bytes(_ name: String) -> [UInt8]? {
        self.fields.first { $0.name == name }?.value
    }

    /// The number after the first space of a status line (0 if none).
    private static func statusCode(_ line: UnsafeRawBufferPointer) -> Int {
        guard let space = line.firstIndex(of: 0x20) else { return 0 }
        var status = 0
        for byte in line[(space + 1)...] {
            guard byte >= 0x30, byte <= 0x39, status < 1000 else { break }
            status = status * 10 + Int(byte - 0x30)
        }
        return status
    }

    /// A header value as C's `strtoull` reads it (`mpd`'s `ParseUint64`): leading white space, then digits;
    /// 0 when there are none, the largest value on overflow.
    static func unsigned(_ text: String) -> UInt64 {
        var value: UInt64 = 0
        var started = false
        for byte in text.utf8 {
            if !started, byte == 0x20 || (byte >= 0x09 && byte <= 0x0D) { continue }
            if !started, byte == 0x2B {
                started = true
                continue
            }
            guard byte >= 0x30, byte <= 0x39 else { break }
            started = true
            let (times, overflow) = value.multipliedReportingOverflow(by: 10)
            let (sum, carry) = times.addingReportingOverflow(UInt64(byte - 0x30))
            if overflow || carry { return .max }
            value = sum
        }
        return value
    }
}
