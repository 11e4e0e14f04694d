// SPDX-License-Identifier: GPL-3.0-or-later

import Model

/// A song handed to the player: where to read it and what playback needs to know about it.
public struct PlayableSong: Sendable, Hashable {
    /// Identifies this hand-over in `PlayerEvent`s. The playlist makes a new token for every hand-over, so the
    /// same queue entry played twice (repeat, single) has two tokens.
    public var token: UInt64
    /// The song's URI, as clients see it (for logs and `error:` texts).
    public var uri: String
    /// The absolute file system path the decoder opens (for a remote song: its URL).
    public var path: String
    /// Whether the song is a URL an input plugin opens rather than a file.
    public var isRemote: Bool { URIScheme.hasScheme(self.path) }
    /// ReplayGain values from the library, which the player uses when the decoder reports none
    /// (`Decoder.replayGain`); when this is empty too, it may read the file's APE tag (`Player.init`'s
    /// `apeReplayGainReader`).
    public var replayGain: ReplayGainInfo
    /// The length the library knows, in milliseconds (used for `duration:` until the decoder knows better).
    public var durationMilliseconds: UInt64?
    /// Where playback of this song starts (`rangeid` start), in milliseconds. 0: the beginning.
    public var rangeStartMilliseconds: UInt64
    /// Where it ends (`rangeid` end), in milliseconds; `nil`: at the end of the file.
    public var rangeEndMilliseconds: UInt64?
    /// The song's tags from the library, which every output gets when the song starts, even when there are none
    /// (`mpd` hands a local file's tag to its outputs, empty or not); `nil` for a stream, whose tags come from
    /// the stream only, as with `mpd`.
    public var tags: [TagItem]?

    /// Creates a song for the player.
    public init(
        token: UInt64, uri: String, path: String, replayGain: ReplayGainInfo = ReplayGainInfo(),
        durationMilliseconds: UInt64? = nil, rangeStartMilliseconds: UInt64 = 0, rangeEndMilliseconds: UInt64? = nil,
        tags: [TagItem]? = nil
    ) {
        self.tags = tags
        self.token = token
        self.uri = uri
        self.path = path
        self.replayGain = replayGain
        self.durationMilliseconds = durationMilliseconds
        self.rangeStartMilliseconds = rangeStartMilliseconds
        self.rangeEndMilliseconds = rangeEndMilliseconds
    }
}

/// The player's state, as `status` reports it.
public enum PlayerState: String, Sendable {
    case stop, play, pause
}

/// `replay_gain_mode`.
public enum ReplayGainMode: String, Sendable, CaseIterable {
    case off, track, album, auto
}

/// What the player tells the playlist. Delivered on the event loop thread, in the order they happened.
public enum PlayerEvent: Sendable, Equatable {
    /// The song with this token is now the one heard: playback started (after `play`) or crossed a song
    /// border into the queued song (gapless or cross-faded). `status` elapsed restarts at its start.
    case songStarted(token: UInt64)
    /// The decoder is about to start the song with this token (after `play` or a seek into another song): the
    /// moment to queue the song after it (mpd's `OnPlayerSync`), so the decoder knows it before the current
    /// one can end, however fast an output consumes. Comes in the loop turn after the command.
    case decoderStarting(token: UInt64)
    /// The decoder opened the song with this token, started by `play` or a seek (not a queued one), and knows
    /// its audio format: `mpd`'s decoder start-up, which raises idle `player` a moment after the command's own.
    case decoderStarted(token: UInt64)
    /// The song with this token played to its end and nothing was queued: the player stopped and closed
    /// its outputs' streams.
    case finished(token: UInt64)
    /// The song with this token could not be opened or decoded (`message` is `mpd`'s `error:` text, such as
    /// `Failed to decode song.mp3`). If a song was queued the player goes on with it (a `songStarted` for it
    /// follows); otherwise it stops.
    case songFailed(token: UInt64, message: String)
    /// No output can play: every enabled output failed (`message` is the last failure), none is enabled at
    /// `play` or resume (`All audio outputs are disabled`), or the last one was disabled while playing
    /// (`Failed to open audio output`). As `mpd`, the player pauses where it was, keeping the song; `message`
    /// is for `error:`. Playback resumes with `setPaused(false)` once an output is enabled or works again.
    case outputFailed(message: String)
    /// Playback paused by itself at the start of the queued song because `borderPause` was set (single mode).
    /// A `songStarted` for that song comes first.
    case pausedAtBorder(token: UInt64)
    /// The mixer volume changed outside Fermata (hardware mixer): idle `mixer`.
    case mixerChanged
    /// An output was enabled, disabled or changed state by itself: idle `output`.
    case outputsChanged
    /// The stream of the song with this token brought new tags (a radio station's name or title): they
    /// replace the queue entry's, as `mpd` shows a stream's tags.
    case tagChanged(token: UInt64, tags: [TagItem])
}

/// What `status` shows of the player, read on the event loop thread.
public struct PlayerSnapshot: Sendable, Equatable {
    /// play, pause or stop.
    public var state: PlayerState
    /// The token of the song heard now (or paused in), if any.
    public var token: UInt64?
    /// Seconds played of the current song, from what the outputs have actually played.
    public var elapsedSeconds: Double
    /// The current song's length in seconds, when known.
    public var durationSeconds: Double?
    /// The bit rate of the current stream in kbit/s (0 when unknown).
    public var bitRate: Int
    /// The format the decoder produces (`audio:` in `status`), once known: from the decoder's start-up, as
    /// `mpd`'s, even while paused before any output played it.
    public var audioFormat: AudioFormat?

    /// A stopped player.
    public init(
        state: PlayerState = .stop, token: UInt64? = nil, elapsedSeconds: Double = 0, durationSeconds: Double? = nil,
        bitRate: Int = 0, audioFormat: AudioFormat? = nil
    ) {
        self.state = state
        self.token = token
        self.elapsedSeconds = elapsedSeconds
        self.durationSeconds = durationSeconds
        self.bitRate = bitRate
        self.audioFormat = audioFormat
    }
}

/// One configured output as the `outputs` command lists it.
public struct OutputDescription: Sendable, Equatable {
    /// `outputid`: the index in configuration order.
    public var id: Int
    /// `outputname`.
    public var name: String
    /// `plugin`: `alsa`, `null`, `fifo`, `pipe`…
    public var plugin: String
    /// `outputenabled`.
    public var enabled: Bool
    /// `attribute` lines (`name=value`), in `mpd`'s order (e.g. ALSA's `allowed_formats`, `dop`).
    public var attributes: [(name: String, value: String)]
    /// Whether the output has a mixer (hardware or software): enabling or disabling it then raises idle `mixer`
    /// too, as in `mpd`, whatever the mixer reports.
    public var hasMixer: Bool

    /// The `plugin` of an output that moved to another partition (`mpd`'s dummy, which plays nothing).
    public static let dummyPlugin = "dummy"

    /// Whether this is the dummy an output left behind when it moved to another partition.
    public var isDummy: Bool { self.plugin == Self.dummyPlugin }

    /// The dummy of the output named `name`, at `id`.
    public static func dummy(id: Int, name: String, enabled: Bool = false) -> Self {
        Self(id: id, name: name, plugin: Self.dummyPlugin, enabled: enabled)
    }

    /// Creates a description.
    public init(
        id: Int, name: String, plugin: String, enabled: Bool, attributes: [(name: String, value: String)] = [],
        hasMixer: Bool = false
    ) {
        self.id = id
        self.name = name
        self.plugin = plugin
        self.enabled = enabled
        self.attributes = attributes
        self.hasMixer = hasMixer
    }

    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.id == rhs.id && lhs.name == rhs.name && lhs.plugin == rhs.plugin && lhs.enabled == rhs.enabled
            && lhs.hasMixer == rhs.hasMixer
            && lhs.attributes.map(\.name) == rhs.attributes.map(\.name)
            && lhs.attributes.map(\.value) == rhs.attributes.map(\.value)
    }
}

/// The player as the playlist drives it: start a song, queue the next, pause, seek, stop; plus the mixer
/// and outputs that `setvol`, `outputs` and friends reach.
///
/// Loop-confined: every member is called on the event loop thread, and `onEvent` is called there. The
/// implementation (`Player`) runs decoding and output on its own threads; this interface never blocks for
/// long (at most until the audio threads acknowledge a command).
public protocol PlayerControl: AnyObject {
    /// Receives the player's events on the event loop thread. Set once, before the first `play`.
    var onEvent: (PlayerEvent) -> Void { get set }

    /// Starts `song` now at `seconds` into it (0: from the start), replacing whatever plays and forgetting
    /// any queued song; unpauses. A `songStarted` event follows once audio reaches the outputs, or
    /// `songFailed`.
    func play(_ song: PlayableSong, atSeconds seconds: Double)
    /// Sets (or with `nil` clears) the song to play after the current one, decoded ahead so the border is
    /// gapless or cross-faded. Replaces an earlier queued song that has not started yet.
    func queue(_ song: PlayableSong?)
    /// Whether to pause at the start of the queued song when the current one ends (single mode).
    var borderPause: Bool { get set }
    /// Pauses (`true`) or resumes (`false`); nothing happens when stopped. Returns at once: the outputs stop writing
    /// (a device without a pause mode closes its stream) or open their streams again afterwards, which
    /// ``whenOutputsApplied(_:)`` reports.
    func setPaused(_ paused: Bool)
    /// Stops: drops the current and queued songs and closes the outputs' streams (done when
    /// ``whenOutputsApplied(_:)`` says so). No event follows.
    func stop()
    /// Seeks within the current song (the one with `token`), to `seconds` from its start.
    ///
    /// - Returns: `false` when the song cannot seek (the playlist then replies as `mpd` does).
    func seek(token: UInt64, toSeconds seconds: Double) -> Bool
    /// What `status` shows now.
    var snapshot: PlayerSnapshot { get }
    /// Asks the input cache, when there is one, to read the local file at `path` into memory ahead of its turn
    /// (`mpd`'s `PrefetchSong`). Returns at once: the cache's own thread reads.
    func prefetch(path: String)
    /// Whether there is an input cache for `prefetch(path:)` to fill.
    var prefetches: Bool { get }

    /// `crossfade` in seconds (0: off).
    var crossfadeSeconds: Double { get set }
    /// `mixrampdb`.
    var mixRampDB: Double { get set }
    /// `mixrampdelay` in seconds (negative or NaN: off).
    var mixRampDelay: Double { get set }
    /// `replay_gain_mode` as the player applies it (the playlist resolves `auto` to track or album).
    var replayGainMode: ReplayGainMode { get set }

    /// The volume 0...100 of the mixer, or `nil` when there is no working mixer (`status` then has no
    /// `volume:` line and `setvol` fails with `No mixer`). As in `mpd`, the average over the enabled outputs'
    /// mixers and every software mixer, enabled or not.
    var volume: Int? { get }
    /// Sets the volume 0...100 on every enabled output's mixer (and every software mixer, enabled or not).
    func setVolume(_ volume: Int) -> VolumeChange

    /// Sets the volume 0...100 of the software mixers only (`sw_volume` of the state file), enabled or not.
    ///
    /// - Returns: `false` when no output has a software mixer.
    func setSoftwareVolume(_ volume: Int) -> Bool

    /// The outputs of this player in `mpd`'s order (configuration order, then those moved in) with the dummies of
    /// those moved out; `id` is the index in this list.
    var outputs: [OutputDescription] { get }
    /// Enables or disables output `id`.
    ///
    /// - Returns: `false` when no output has that id.
    func setOutput(id: Int, enabled: Bool) -> Bool
    /// Calls `done` (from any thread, or at once from this one) once every output has done what it was last asked:
    /// enabled or disabled its device after ``setOutput(id:enabled:)``, stopped writing after ``setPaused(_:)``
    /// (closed the stream of a device without a pause mode) or opened its stream again on a resume, closed it after
    /// ``stop()``, as `mpd` answers `enableoutput`, `disableoutput`, `pause`, `play` and `stop` once its output
    /// threads are done.
    func whenOutputsApplied(_ done: @escaping @Sendable () -> Void)
    /// Sets a runtime attribute of output `id` (`outputset`).
    ///
    /// - Returns: `false` when no output has that id; throws the output's message when the attribute is not
    ///   known or not settable.
    func setOutputAttribute(id: Int, name: String, value: String) throws(OutputError) -> Bool
    /// Takes the output named `name` out of this player (`moveoutput` to another partition): it is disabled and
    /// closed (by its thread, afterwards: the loop does not wait), and a dummy of the same name stays in its place in
    /// ``outputs`` (`plugin: dummy`, disabled).
    ///
    /// - Returns: the output, with whether it was enabled; `nil` when this player has no such output (only its
    ///   dummy, or nothing).
    func detachOutput(named name: String) -> DetachedOutput?
    /// Adds an output taken from another player: it replaces its own dummy if this player had it before, or
    /// joins the end of ``outputs``, enabled as it was. It plays once the other player's thread let go of its
    /// device; ``whenOutputsApplied(_:)`` reports when it applied its flag.
    func attachOutput(_ output: DetachedOutput)

    /// Stops the audio threads and closes every device; called once at shutdown.
    func shutdown()
}

/// An output on its way from one player to another (`moveoutput`): its name, whether it was enabled, and for
/// ``Player`` the device, mixer and pipe slot it plays with.
public struct DetachedOutput {
    /// `outputname`.
    public let name: String
    /// Whether it was enabled where it was taken from.
    public let enabled: Bool
    /// What plays: `nil` for an output of a player that plays nothing (a test's double).
    let engine: Engine?

    /// What a ``Player``'s output plays with.
    struct Engine {
        /// Its reader in every player's chunk pipe (its index among the configured outputs).
        let slot: Int
        let configuration: OutputConfiguration
        let device: any AudioOutput
        let mixer: MixerControl?
        /// Calls its argument (from any thread, or at once) once the thread that played it let go of the device.
        let released: @Sendable (@escaping @Sendable () -> Void) -> Void
    }

    init(name: String, enabled: Bool, engine: Engine?) {
        self.name = name
        self.enabled = enabled
        self.engine = engine
    }

    /// An output of a player that only describes its outputs (a test's double): it cannot join a ``Player``.
    public init(name: String, enabled: Bool) {
        self.init(name: name, enabled: enabled, engine: nil)
    }
}

extension PlayerControl {
    /// No input cache: nothing to prefetch.
    public var prefetches: Bool { false }
    /// No input cache: nothing to prefetch.
    public func prefetch(path: String) {}
}
