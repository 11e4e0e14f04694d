// SPDX-License-Identifier: GPL-3.0-or-later

import Playback

/// A `PlayerControl` without audio: it records what the playlist asks, changes state at once, and sends the
/// events a test scripts (`start()`, `endOfSong()`, `fail(_:)`…).
///
/// Loop-confined like the real player: use it on one thread.
public final class ScriptedPlayer: PlayerControl {
    /// One call the playlist made.
    public enum Call: Equatable, Sendable {
        case play(uri: String, seconds: Double)
        case queue(uri: String?)
        case setPaused(Bool)
        case stop
        case seek(seconds: Double)
        case prefetch(path: String)
    }

    public var onEvent: (PlayerEvent) -> Void = { _ in }
    /// Every call, in order.
    public private(set) var calls: [Call] = []
    /// The song playing (or paused in), if any.
    public private(set) var currentSong: PlayableSong?
    /// The song queued next, if any.
    public private(set) var queuedSong: PlayableSong?
    public var borderPause = false
    /// Whether `seek` succeeds.
    public var seekable = true
    /// What `snapshot` reports for elapsed time while not stopped.
    public var elapsedSeconds = 0.0
    private var state = PlayerState.stop

    public var crossfadeSeconds = 0.0
    public var mixRampDB = 0.0
    public var mixRampDelay = -1.0
    public var replayGainMode = ReplayGainMode.off

    /// The mixer volume, or `nil` for no mixer.
    public var volume: Int?
    /// Whether `setSoftwareVolume` finds a software mixer (it then sets `volume`).
    public var hasSoftwareMixer = true
    /// The outputs `outputs` lists.
    public var outputs: [OutputDescription]
    /// Attribute names `outputset` accepts.
    public var settableAttributes: Set<String> = []

    /// Creates a stopped player with one null output and a software-mixer-like volume.
    public init(volume: Int? = 100, outputs: [OutputDescription]? = nil) {
        self.volume = volume
        self.outputs = outputs ?? [OutputDescription(id: 0, name: "Null Output", plugin: "null", enabled: true)]
    }

    public func play(_ song: PlayableSong, atSeconds seconds: Double) {
        self.calls.append(.play(uri: song.uri, seconds: seconds))
        self.currentSong = song
        self.queuedSong = nil
        self.state = .play
        self.elapsedSeconds = seconds
    }

    public func queue(_ song: PlayableSong?) {
        self.calls.append(.queue(uri: song?.uri))
        self.queuedSong = song
    }

    public func setPaused(_ paused: Bool) {
        self.calls.append(.setPaused(paused))
        guard self.state != .stop else { return }
        self.state = paused ? .pause : .play
    }

    public func stop() {
        self.calls.append(.stop)
        self.state = .stop
        self.currentSong = nil
        self.queuedSong = nil
    }

    public func seek(token: UInt64, toSeconds seconds: Double) -> Bool {
        self.calls.append(.seek(seconds: seconds))
        guard self.seekable, self.currentSong?.token == token else { return false }
        self.elapsedSeconds = seconds
        return true
    }

    public var snapshot: PlayerSnapshot {
        guard self.state != .stop else { return PlayerSnapshot() }
        return PlayerSnapshot(
            state: self.state, token: self.currentSong?.token, elapsedSeconds: self.elapsedSeconds,
            durationSeconds: self.currentSong?.durationMilliseconds.map { Double($0) / 1000 }, bitRate: 128,
            audioFormat: nil)
    }

    public func setVolume(_ volume: Int) -> VolumeChange {
        guard self.volume != nil else { return .noMixer }
        self.volume = volume
        return .changed
    }

    public func setSoftwareVolume(_ volume: Int) -> Bool {
        guard self.hasSoftwareMixer, self.volume != nil else { return false }
        self.volume = volume
        return true
    }

    public func setOutput(id: Int, enabled: Bool) -> Bool {
        guard let index = self.outputs.firstIndex(where: { $0.id == id }) else { return false }
        self.outputs[index].enabled = enabled
        return true
    }

    /// Its outputs are flags: they applied every change at once.
    public func whenOutputsApplied(_ done: @escaping @Sendable () -> Void) { done() }

    public func setOutputAttribute(id: Int, name: String, value: String) throws(OutputError) -> Bool {
        guard let index = self.outputs.firstIndex(where: { $0.id == id }) else { return false }
        guard self.settableAttributes.contains(name) else { throw OutputError("Unsupported attribute") }
        var attributes = self.outputs[index].attributes.filter { $0.name != name }
        attributes.append((name, value))
        self.outputs[index].attributes = attributes
        return true
    }

    public func detachOutput(named name: String) -> DetachedOutput? {
        guard let index = self.outputs.firstIndex(where: { $0.name == name && !$0.isDummy }) else {
            return nil
        }
        let enabled = self.outputs[index].enabled
        self.outputs[index] = .dummy(id: index, name: name)
        return DetachedOutput(name: name, enabled: enabled)
    }

    public func attachOutput(_ output: DetachedOutput) {
        let description = OutputDescription(id: 0, name: output.name, plugin: "null", enabled: output.enabled)
        if let index = self.outputs.firstIndex(where: { $0.name == output.name && $0.isDummy }) {
            self.outputs[index] = description
            self.outputs[index].id = index
        } else {
            self.outputs.append(description)
            self.outputs[self.outputs.count - 1].id = self.outputs.count - 1
        }
    }

    public func shutdown() {}

    /// Whether the player has an input cache (then `prefetch(path:)` is recorded).
    public var prefetches = false

    public func prefetch(path: String) { self.calls.append(.prefetch(path: path)) }

    /// Forgets the recorded calls.
    public func clearCalls() { self.calls = [] }

    // MARK: - Scripted events

    /// The decoder is about to start the current song: `decoderStarting`.
    public func decoderStarts() {
        guard let song = self.currentSong else { return }
        self.onEvent(.decoderStarting(token: song.token))
    }

    /// The current song's audio reached the outputs: `songStarted`.
    public func start() {
        guard let song = self.currentSong else { return }
        self.onEvent(.songStarted(token: song.token))
    }

    /// The current song ends: the queued one starts (pausing at its start with `borderPause`), or the player
    /// stops with `finished`.
    public func endOfSong() {
        guard let song = self.currentSong else { return }
        if let next = self.queuedSong {
            self.currentSong = next
            self.queuedSong = nil
            self.elapsedSeconds = 0
            self.onEvent(.songStarted(token: next.token))
            if self.borderPause {
                self.state = .pause
                self.onEvent(.pausedAtBorder(token: next.token))
            }
        } else {
            self.state = .stop
            self.currentSong = nil
            self.onEvent(.finished(token: song.token))
        }
    }

    /// The current song cannot be decoded: the queued one starts, or the player stops.
    public func fail(_ message: String) {
        guard let song = self.currentSong else { return }
        if let next = self.queuedSong {
            self.currentSong = next
            self.queuedSong = nil
            self.onEvent(.songFailed(token: song.token, message: message))
            self.onEvent(.songStarted(token: next.token))
        } else {
            self.state = .stop
            self.currentSong = nil
            self.onEvent(.songFailed(token: song.token, message: message))
        }
    }

    /// Every output failed: the player stops.
    public func failOutputs(_ message: String) {
        // As `Player`: it pauses where it was, keeping the song.
        if self.state == .play { self.state = .pause }
        self.onEvent(.outputFailed(message: message))
    }
}
