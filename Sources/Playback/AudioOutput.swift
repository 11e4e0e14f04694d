// SPDX-License-Identifier: GPL-3.0-or-later

import Model

/// Why an output or mixer failed: a message for the log and for `error:`.
public struct OutputError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong, in one line (`mpd`'s wording where it has one).
    public var message: String

    /// Creates an error.
    public init(_ message: String) { self.message = message }

    public var description: String { self.message }
}

/// One `audio_output { … }` block: the settings every output has, plus the plugin's own.
public struct OutputConfiguration: Sendable, Equatable {
    /// `name` (required by `mpd`).
    public var name: String
    /// `type`: the plugin, such as `alsa`, `null`, `fifo`, `pipe`.
    public var type: String
    /// `enabled` (default yes): listed enabled at start-up unless the state file says otherwise (its device is
    /// enabled when it first plays).
    public var enabled: Bool
    /// `mixer_type`: `hardware` (default where the plugin has one), `software`, `none`.
    public var mixerType: MixerType?
    /// `format`: a fixed output format mask such as `44100:16:2` or `*:24:*`, as the block's reader parsed it.
    public var format: AudioFormatMask?
    /// `always_on`.
    public var alwaysOn: Bool
    /// `tags` (default yes): whether the output gets the songs' and the streams' tags (``AudioOutput/sendTag(_:)``).
    public var tags: Bool
    /// Every parameter of the block as written (the plugin reads its own, such as `device`, `path`,
    /// `command`, `sync`, `buffer_time`, `period_time`, `mixer_device`, `mixer_control`).
    public var parameters: BlockParameters
    /// The line of the block in its file (0 without one), for the errors that name it.
    public var line: Int = 0
    /// The filter chain the PCM goes through after ReplayGain and before the software volume and the conversion
    /// to the device's format (`volume_normalization`, then the `filters` list), as `mpd` chains them.
    public var filters: [PCMFilter] = []

    /// Creates a configuration.
    public init(
        name: String, type: String, enabled: Bool = true, mixerType: MixerType? = nil, format: AudioFormatMask? = nil,
        alwaysOn: Bool = false, tags: Bool = true, parameters: BlockParameters = [:]
    ) {
        self.name = name
        self.type = type
        self.enabled = enabled
        self.mixerType = mixerType
        self.format = format
        self.alwaysOn = alwaysOn
        self.tags = tags
        self.parameters = parameters
    }
}

/// An audio device: the part of an output plugin that writes PCM.
///
/// Created on the event loop thread, then used only on its output thread (hence `Sendable` by transfer:
/// implementations are `final class`es marked `@unchecked Sendable` with that reason), except
/// `interrupt()`, which any thread may call. Modelled on `mpd`'s output plugin interface: `open` per
/// stream, `play` blocking until the device takes some data, `delay` for paced outputs.
public protocol AudioOutput: AnyObject, Sendable {
    /// The plugin name `outputs` prints: `alsa`, `null`, `fifo`, `pipe`.
    var plugin: String { get }

    /// Acquires the device for the output's lifetime while enabled (may do nothing).
    func enable() throws(OutputError)
    /// Releases what `enable` acquired.
    func disable()

    /// Opens a stream in `format`.
    ///
    /// - Returns: the format the device accepts, which may differ (another sample format, rate or channel
    ///   count); the output thread converts to it.
    func open(_ format: AudioFormat) throws(OutputError) -> AudioFormat
    /// Closes the stream.
    func close()

    /// Writes interleaved PCM in the opened format, blocking until the device takes some.
    ///
    /// Runs on the audio path: no allocation, lock or log per call.
    /// - Returns: bytes consumed (a whole number of frames, more than zero).
    func play(_ data: UnsafeRawBufferPointer) throws(OutputError) -> Int
    /// Frames written but not yet heard (the device's delay), for `elapsed`.
    var delayFrames: Int { get }
    /// Blocks until everything written has been heard, or until ``interrupt()``.
    ///
    /// - Returns: `false` when interrupted; what was not heard yet stays in the device, so the caller drains
    ///   again (the request that interrupted needs no drop) or cancels.
    func drain() throws(OutputError) -> Bool
    /// Drops everything written and not yet heard (seek, stop, skip).
    func cancel()
    /// Pauses the stream. Called repeatedly while paused.
    ///
    /// - Returns: `false` when the device cannot stay paused (the output thread then closes the stream and
    ///   reopens it on resume).
    func pause() -> Bool
    /// Whether the device has a pause mode (`mpd`'s `SupportsPause`): ``pause()`` may keep the stream open. Without
    /// one (the default, with the default ``pause()``), the output thread closes the stream as soon as it pauses,
    /// before the pause is answered, as `mpd` closes such an output's mixer before it answers.
    var hasPauseMode: Bool { get }
    /// Makes a blocking `play`, `drain` or `pause` return soon. Any thread.
    func interrupt()

    /// The tags of the song (or the stream title) whose audio the next write starts, as `mpd` passes a chunk's
    /// tag to its outputs: empty for a local file without tags. The httpd output sends them to listeners. Output
    /// thread, once per song or title.
    func sendTag(_ tags: [TagItem])

    /// Runtime attributes for `outputs` (`name`, `value`), in the order `mpd` prints them.
    var attributes: [(name: String, value: String)] { get }
    /// Sets a runtime attribute (`outputset`).
    func setAttribute(name: String, value: String) throws(OutputError)
}

extension AudioOutput {
    public func enable() throws(OutputError) {}
    public func disable() {}
    public var delayFrames: Int { 0 }
    public func drain() throws(OutputError) -> Bool { true }
    public func cancel() {}
    public func pause() -> Bool { false }
    public var hasPauseMode: Bool { false }
    public func interrupt() {}
    public func sendTag(_ tags: [TagItem]) {}
    public var attributes: [(name: String, value: String)] { [] }
    public func setAttribute(name: String, value: String) throws(OutputError) {
        throw OutputError("Unsupported attribute")
    }
}

/// An output plugin: makes an output (and its hardware mixer, if it has one) from a configuration block.
///
/// Registered in the executable, the only place that knows which plugins exist.
public protocol OutputPlugin: Sendable {
    /// The `type` it handles.
    var name: String { get }
    /// Makes the output.
    ///
    /// - Throws: `OutputError` with `mpd`'s message for a bad parameter.
    func makeOutput(_ configuration: OutputConfiguration) throws(OutputError) -> any AudioOutput
    /// Makes the plugin's hardware mixer for `mixer_type "hardware"`; `nil` when the plugin has none
    /// (the output then has no mixer, as in `mpd`).
    ///
    /// - Parameter onChange: called from any thread when the volume changes outside Fermata.
    func makeHardwareMixer(
        _ configuration: OutputConfiguration, onChange: @escaping @Sendable () -> Void
    ) throws(OutputError) -> (any Mixer)?
    /// `mpd`'s default-device test, run when no `audio_output` is configured: `nil` when the plugin has none (it is
    /// never detected), else whether its default device opens now. Start-up only; may block on the device.
    func testDefaultDevice() -> DefaultDeviceTest?
    /// Whether the block's `format` must fix rate, bits and channels (`mpd`'s
    /// `FLAG_NEED_FULLY_DEFINED_AUDIO_FORMAT`): `Need full audio format specification` otherwise.
    var needsFullyDefinedFormat: Bool { get }
}

/// The result of an output plugin's default-device test (``OutputPlugin/testDefaultDevice()``).
public enum DefaultDeviceTest: Sendable, Equatable {
    /// The default device opens.
    case opens
    /// It does not; `errors` are the lines `mpd` logs then under the plugin's domain (none, one, or one per device
    /// tried).
    case fails(errors: [String])
}

extension OutputPlugin {
    /// No default-device test: the plugin is never detected.
    public func testDefaultDevice() -> DefaultDeviceTest? { nil }
    public var needsFullyDefinedFormat: Bool { false }
}
