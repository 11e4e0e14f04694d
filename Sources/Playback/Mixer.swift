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
}
