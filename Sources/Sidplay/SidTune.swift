// SPDX-License-Identifier: GPL-3.0-or-later

import CSidplayShim

/// A libsidplayfp failure: what failed and libsidplayfp's message.
public struct SidplayError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The operation (`SidTune`, `sidplayfp.load`…).
    public var operation: String
    /// libsidplayfp's message.
    public var message: String

    /// Creates an error.
    public init(operation: String, message: String) {
        self.operation = operation
        self.message = message
    }

    /// `operation: message`.
    public var description: String { "\(self.operation): \(self.message)" }

    /// Calls `body` with a message buffer and throws its contents when `body` returns `nil`.
    static func check<Result>(
        _ operation: String, _ body: (UnsafeMutablePointer<CChar>, Int) -> Result?
    ) throws(SidplayError) -> Result {
        var message = [CChar](repeating: 0, count: 256)
        let result = message.withUnsafeMutableBufferPointer { buffer in body(buffer.baseAddress!, buffer.count) }
        guard let result else {
            let text = message.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
            throw SidplayError(operation: operation, message: text)
        }
        return result
    }
}

/// A C64 tune loaded by libsidplayfp (`SidTune`): PSID/RSID, MUS/STR, PRG, P00; freed when released.
///
/// Thread confinement: create on any thread, then use from one thread at a time.
public final class SidTune {
    let handle: OpaquePointer

    /// The largest file handed to libsidplayfp (it refuses anything above 64 KiB of C64 data itself).
    public static let fileLimit = 1 << 20

    /// Loads the tune at `path` as libsidplayfp's file loader does (a `.mus` finds its `.str` companion and
    /// the other way round), with every file it asks for read by `read` (`nil`: the file cannot be read;
    /// files larger than `fileLimit` count as unreadable).
    ///
    /// - Throws: `SidplayError` when the tune's own file cannot be read or libsidplayfp rejects it.
    public init(path: String, read: (String) -> [UInt8]?) throws(SidplayError) {
        self.handle = try withoutActuallyEscaping(read) { (read) throws(SidplayError) in
            let box = ReaderBox(read)
            // Unmanaged: the box lives across the synchronous call; libsidplayfp calls back only during it.
            let context = Unmanaged.passUnretained(box).toOpaque()
            return try withExtendedLifetime(box) { () throws(SidplayError) in
                do throws(SidplayError) {
                    return try SidplayError.check("SidTune") { message, size in
                        fsid_tune_load(path, sidplayRead, context, message, size)
                    }
                } catch {
                    guard let refusal = box.refusal else { throw error }
                    throw SidplayError(operation: "SidTune", message: refusal)
                }
            }
        }
    }

    /// Loads a single-file tune (PSID, RSID, MUS) from its bytes.
    ///
    /// - Throws: `SidplayError` when libsidplayfp rejects the data.
    public init(data: [UInt8]) throws(SidplayError) {
        guard data.count <= Self.fileLimit else {
            throw SidplayError(operation: "SidTune", message: "file too large")
        }
        if let refusal = Self.refusal(of: data) {
            throw SidplayError(operation: "SidTune", message: refusal)
        }
        self.handle = try data.withUnsafeBufferPointer { (bytes) throws(SidplayError) in
            try SidplayError.check("SidTune") { message, size in
                fsid_tune_read(bytes.baseAddress, UInt32(bytes.count), message, size)
            }
        }
    }

    deinit { fsid_tune_free(self.handle) }

    /// Why libsidplayfp must not see `bytes`, or `nil` when they may go to it.
    ///
    /// libsidplayfp 2.4 takes a PSID/RSID header's data offset as given: an offset past the end of the file makes
    /// the C64 data's length wrap around, and the loader then reads the load address from beyond the buffer
    /// (a segmentation fault, found by the `c64opl` fuzz target). A header whose data (and, when the header's load
    /// address is 0, the two bytes of the load address that start the data) does not fit in the file is refused
    /// here.
    static func refusal(of bytes: [UInt8]) -> String? {
        guard bytes.count >= 8 else { return nil }
        let magic = bytes[0..<4]
        guard magic.elementsEqual("PSID".utf8) || magic.elementsEqual("RSID".utf8) else { return nil }
        let dataOffset = Int(bytes[6]) << 8 | Int(bytes[7])
        let loadAddress = bytes.count >= 10 ? Int(bytes[8]) << 8 | Int(bytes[9]) : 0
        let needed = dataOffset + (loadAddress == 0 ? 2 : 0)
        return needed > bytes.count ? "the data offset \(dataOffset) is past the end of the file" : nil
    }

    /// The number of songs (subtunes).
    public var songCount: Int { Int(fsid_tune_songs(self.handle)) }

    /// The song played when none is chosen (1-based).
    public var startSong: Int { Int(fsid_tune_start_song(self.handle)) }

    /// Selects song `song` (1-based; 0, or a number past the last song, for the start song).
    ///
    /// - Returns: the selected song.
    @discardableResult
    public func selectSong(_ song: Int) -> Int {
        Int(fsid_tune_select(self.handle, UInt32(clamping: max(0, song))))
    }

    /// How many SID chips the tune uses (1 to 3).
    public var sidChips: Int { Int(fsid_tune_sid_chips(self.handle)) }

    /// The tune's MD5 in the HVSC 68 format (of the whole file), as song length databases key it.
    public var md5: String? {
        var digits = [CChar](repeating: 0, count: 33)
        guard fsid_tune_md5(self.handle, &digits) != 0 else { return nil }
        return digits.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }

    /// How many header texts the tune has (title, author, released for PSID; fewer for other formats).
    public var infoStringCount: Int { Int(fsid_tune_info_count(self.handle)) }

    /// Header text `index` as UTF-8 bytes, converted from Windows-1252 by ICU as `mpd` does; empty past the
    /// last one.
    public func infoString(_ index: Int) -> [UInt8] {
        var utf8 = [UInt8](repeating: 0, count: 4 * 1024)
        let count = utf8.withUnsafeMutableBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { chars in
                fsid_tune_info_string(self.handle, UInt32(clamping: max(0, index)), chars.baseAddress, chars.count)
            }
        }
        utf8.removeSubrange(count...)
        return utf8
    }
}

/// The reader closure of a load in progress.
private final class ReaderBox {
    let read: (String) -> [UInt8]?
    /// Why a file read for the load was kept from libsidplayfp (`SidTune.refusal(of:)`).
    var refusal: String?
    init(_ read: @escaping (String) -> [UInt8]?) { self.read = read }
}

/// libsidplayfp's file reads, forwarded to the `ReaderBox` in `context`.
private let sidplayRead: fsid_read_function = { context, name, sink in
    guard let context, let name, let sink else { return 1 }
    // Unmanaged: `SidTune.init(path:read:)` keeps the box alive during the load.
    let box = Unmanaged<ReaderBox>.fromOpaque(context).takeUnretainedValue()
    guard let bytes = box.read(String(cString: name)), bytes.count <= SidTune.fileLimit else { return 1 }
    if let refusal = SidTune.refusal(of: bytes) {
        box.refusal = refusal
        return 1
    }
    bytes.withUnsafeBufferPointer { fsid_sink_append(sink, $0.baseAddress, $0.count) }
    return 0
}

/// A song length database (`Songlengths.md5` of the High Voltage SID Collection), read by libsidplayfp.
///
/// Immutable after opening, but libsidplayfp's lookups are not documented as thread-safe: use from one thread
/// at a time.
public final class SidDatabase {
    private let handle: OpaquePointer

    /// Opens the database file at `path`.
    ///
    /// - Throws: `SidplayError` when libsidplayfp cannot read it.
    public init(path: String) throws(SidplayError) {
        self.handle = try SidplayError.check("SidDatabase.open") { message, size in
            fsid_database_open(path, message, size)
        }
    }

    deinit { fsid_database_free(self.handle) }

    /// The length in milliseconds of the tune's selected song (the HVSC 68 format's, else the old seconds),
    /// or `nil` when the database does not list it.
    public func lengthMilliseconds(of tune: SidTune) -> Int? {
        let length = fsid_database_length_ms(self.handle, tune.handle)
        return length >= 0 ? Int(length) : nil
    }
}
