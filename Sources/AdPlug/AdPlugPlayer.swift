// SPDX-License-Identifier: GPL-3.0-or-later

import CAdPlugShim

/// AdPlug loaded none of its players for a file.
public struct AdPlugError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The file.
    public var path: String

    /// Creates an error.
    public init(path: String) { self.path = path }

    /// `path: no AdPlug player loads it`.
    public var description: String { "\(self.path): no AdPlug player loads it" }
}

/// An AdPlug player (OPL2/OPL3 music: HSC, D00, RAD, RAW, A2M…) with its emulated OPL chip (`CEmuopl`,
/// 16-bit stereo); freed when released.
///
/// Thread confinement: create on any thread, then use from one thread at a time; `render(into:)` from one
/// thread of the process at a time. `update()` and `render(into:)` do not allocate in Swift.
public final class AdPlugPlayer {
    private let handle: OpaquePointer

    /// The largest file handed to AdPlug.
    public static let fileLimit = 16 << 20

    /// Opens `path` with the first AdPlug player that loads it (those for its suffix first, then every other
    /// one, as `CAdPlug::factory` does), rendering at `sampleRate` Hz; AdPlug reads each file it needs (the
    /// song, and for some formats an instrument file next to it) through `read` (`nil`: cannot be read; files
    /// larger than `fileLimit` count as unreadable).
    ///
    /// - Throws: `AdPlugError` when no player loads the file.
    public init(path: String, sampleRate: Int, read: (String) -> [UInt8]?) throws(AdPlugError) {
        let opened = withoutActuallyEscaping(read) { read in
            let box = ReaderBox(read)
            // Unmanaged: the box lives across the synchronous call; AdPlug reads files only during it.
            let context = Unmanaged.passUnretained(box).toOpaque()
            return withExtendedLifetime(box) {
                fadplug_open(path, UInt32(clamping: sampleRate), adplugRead, context)
            }
        }
        guard let opened else { throw AdPlugError(path: path) }
        self.handle = opened
    }

    deinit { fadplug_free(self.handle) }

    /// The length AdPlug computes by replaying the song silently (at most 10 minutes), in milliseconds; the
    /// song is rewound afterwards.
    public func songLengthMilliseconds() -> Int { Int(fadplug_songlength(self.handle)) }

    /// The song's title, as the file states it (raw bytes; AdPlug does not say which encoding).
    public var title: [UInt8] { self.text(FADPLUG_TITLE) }
    /// The song's author.
    public var author: [UInt8] { self.text(FADPLUG_AUTHOR) }
    /// The song's description.
    public var description: [UInt8] { self.text(FADPLUG_DESCRIPTION) }
    /// The player's name of the file type ("HSC Adlib Composer / HSC-Tracker"…).
    public var type: [UInt8] { self.text(FADPLUG_TYPE) }

    /// Runs one tick of the replay (the OPL registers it writes).
    ///
    /// Does not allocate. Decoder thread.
    /// - Returns: `false` once the song ended.
    public func update() -> Bool { fadplug_update(self.handle) != 0 }

    /// Renders `buffer.count / 2` interleaved stereo frames of the OPL's output.
    ///
    /// One render at a time in the process: AdPlug's OPL emulator (MAME's fmopl) keeps the chip it renders in
    /// globals, so two players rendering at once corrupt each other's samples (Fermata decodes one song at a
    /// time, as `mpd`). Opening and releasing players is safe on any thread. Does not allocate. Decoder thread.
    public func render(into buffer: UnsafeMutableBufferPointer<Int16>) {
        fadplug_render(self.handle, buffer.baseAddress, Int32(clamping: buffer.count / 2))
    }

    private func text(_ kind: fadplug_text_kind) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: 1024)
        func fill() -> Int {
            bytes.withUnsafeMutableBufferPointer { buffer in
                buffer.withMemoryRebound(to: CChar.self) {
                    fadplug_text(self.handle, Int32(kind.rawValue), $0.baseAddress, $0.count)
                }
            }
        }
        var length = fill()
        if length > bytes.count {
            bytes = [UInt8](repeating: 0, count: length)
            length = fill()
        }
        bytes.removeSubrange(min(length, bytes.count)...)
        return bytes
    }
}

/// The reader closure of an open in progress.
private final class ReaderBox {
    let read: (String) -> [UInt8]?
    init(_ read: @escaping (String) -> [UInt8]?) { self.read = read }
}

/// AdPlug's file reads, forwarded to the `ReaderBox` in `context`.
private let adplugRead: fadplug_read_function = { context, name, sink in
    guard let context, let name, let sink else { return 1 }
    // Unmanaged: `AdPlugPlayer.init` keeps the box alive while AdPlug reads.
    let box = Unmanaged<ReaderBox>.fromOpaque(context).takeUnretainedValue()
    guard let bytes = box.read(String(cString: name)), bytes.count <= AdPlugPlayer.fileLimit else { return 1 }
    bytes.withUnsafeBufferPointer { fadplug_sink_append(sink, $0.baseAddress, $0.count) }
    return 0
}
