// SPDX-License-Identifier: GPL-3.0-or-later

import Input
import Model
import Posix

/// Sound captured from an ALSA PCM as an input stream (`mpd`'s alsa input plugin): `alsa://DEVICE?format=…`
/// (see ``ALSAInputURL``), endless, not seekable, with the MIME type `audio/x-mpd-alsa-pcm;format=…` that the
/// `pcm` decoder plugin plays.
///
/// The device is opened and set up by the thread that opens the stream (the decoder's: the error of a missing
/// device or a bad format is the song's). A capture thread of its own then reads it into a buffer of one second
/// of audio, as `mpd`'s; the reading side only waits on that buffer, so ``cancellation`` (any thread) ends a
/// read at once. Releasing the stream stops the capture thread, waits for it (it never blocks for long: its
/// waits for the device also watch the buffer's wake-up eventfd) and closes the device.
///
/// The reading side is confined to one thread at a time (the decoder's); reads never allocate.
public final class ALSAInputStream: InputStream {
    /// The URL it was opened with.
    public let uri: String
    /// Always `nil`: the capture has no end.
    public var size: UInt64? { nil }
    /// Always `false`.
    public var isSeekable: Bool { false }
    /// `audio/x-mpd-alsa-pcm;format=RATE:BITS:CHANNELS`.
    public let mimeType: String?
    /// Bytes read so far.
    public private(set) var offset: UInt64 = 0
    /// Cancels the stream from any thread.
    public let cancellation: InputCancellation
    private let buffer: AsyncStreamBuffer<Never>
    private let thread: NamedThread

    /// Whether this plugin opens `url`: the `alsa://` scheme, in any case.
    public static func canOpen(_ url: String) -> Bool { ALSAInputURL.canOpen(url) }

    /// Opens the device `url` names for capture and starts reading it.
    ///
    /// - Parameters:
    ///   - url: An `alsa://` URL.
    ///   - settings: The plugin's settings (defaults, `auto_*`).
    ///   - cancellation: Cancels the stream from another thread; a new one if `nil`.
    /// - Throws: `InputError.plugin` with `mpd`'s words (`Failed to open device hw:9: No such file or directory`,
    ///   `Invalid sample format: 17`, `Cannot set sample rate: Invalid argument`), or `.io` when no eventfd can
    ///   be made.
    public convenience init(
        url: String, settings: ALSAInputSettings = ALSAInputSettings(), cancellation: InputCancellation? = nil
    ) throws(InputError) {
        try self.init(url: url, settings: settings, cancellation: cancellation, localConfiguration: nil)
    }

    init(
        url: String, settings: ALSAInputSettings, cancellation: InputCancellation?,
        localConfiguration: ALSALocalConfiguration?
    ) throws(InputError) {
        let source: ALSAInputURL
        do {
            source = try ALSAInputURL(
                url, defaultDevice: settings.defaultDevice, defaultFormat: settings.defaultFormat)
        } catch {
            throw .plugin(message: error.message, uri: url)
        }
        let capture: ALSACapture
        do {
            capture = try ALSACapture(
                device: source.device, format: source.format, mode: settings.openMode,
                localConfiguration: localConfiguration)
        } catch {
            throw .plugin(message: error.message, uri: url)
        }
        let second = max(capture.frameSize, source.format.sampleRate * capture.frameSize)
        let buffer: AsyncStreamBuffer<Never>
        do {
            buffer = try AsyncStreamBuffer(capacity: second, resumeAt: second / 2)
        } catch {
            throw .io(error, uri: url)
        }
        self.uri = url
        self.mimeType = source.mimeType
        self.buffer = buffer
        self.cancellation = cancellation ?? InputCancellation()
        self.thread = NamedThread("alsa capture") { capture.run(into: buffer, uri: url) }
        self.cancellation.onCancel { [weak buffer] in buffer?.cancel() }
    }

    /// Stops the capture thread, waits for it and closes the device.
    deinit {
        self.buffer.cancel()
        self.thread.join()
    }

    /// Reads captured bytes, waiting for the capture thread.
    ///
    /// - Returns: 0 only after the device failed and its last frames were read.
    /// - Throws: `InputError.plugin` (`PCM error - stream aborted`, once), or `.cancelled`.
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws(InputError) -> Int {
        guard !buffer.isEmpty else { return 0 }
        let count = try self.buffer.read(into: buffer, uri: self.uri) { false }
        self.offset += UInt64(count)
        return count
    }

    /// - Throws: `InputError.notSeekable`, always.
    public func seek(to offset: UInt64) throws(InputError) { throw .notSeekable(uri: self.uri) }
}
