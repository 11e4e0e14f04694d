// SPDX-License-Identifier: GPL-3.0-or-later

/// `mixer_type`.
public enum MixerType: String, Sendable, Equatable {
    /// The output's own (ALSA simple mixer element).
    case hardware
    /// Volume applied to the samples in the output thread.
    case software
    /// No volume control.
    case none
}

/// A volume control.
///
/// Called on the event loop thread (`setvol`, `status`), and opened/closed there too. Hardware mixers
/// report changes made by other programs through the `onChange` callback their plugin received.
public protocol Mixer: AnyObject, Sendable {
    /// Opens the control.
    func open() throws(OutputError)
    /// Closes the control.
    func close()
    /// The volume 0...100.
    func volume() throws(OutputError) -> Int
    /// Sets the volume 0...100.
    func setVolume(_ volume: Int) throws(OutputError)
    /// Whether `setvol` may use the mixer now: `false` for a mixer of an output `mpd` has not really enabled yet
    /// (its non-global mixers, such as pulse's, wait for the output's first use), which counts as a disabled
    /// output's. Event loop thread.
    var acceptsVolume: Bool { get }
}

extension Mixer {
    public var acceptsVolume: Bool { true }
}

/// What setting the volume on every output's mixer came to, as `mpd` ranks it (`SetVolumeResult`): each output
/// gives no mixer, disabled (a mixer other than a software one on a disabled output), a failure or success, and the
/// highest rank of all wins. A failure takes the rank of failures when it is the first (even over an earlier
/// success, as in `mpd`); later ones are only logged.
public enum VolumeChange: Sendable, Equatable {
    /// Some mixer took the volume.
    case changed
    /// No output has a mixer (`mpd`: `No mixer`).
    case noMixer
    /// Every mixer but software ones is on a disabled output (`mpd`: `All outputs are disabled`).
    case allDisabled
    /// The first mixer that failed, in `mpd`'s words: `Failed to set mixer for 'NAME'; REASON`.
    case failed(String)

    /// The protocol's error for this outcome (`setvol`, `volume`); `nil` when the volume changed.
    public var message: String? {
        switch self {
        case .changed: nil
        case .noMixer: "No mixer"
        case .allDisabled: "All outputs are disabled"
        case .failed(let message): message
        }
    }
}
