// SPDX-License-Identifier: GPL-3.0-or-later

import MPDProtocol
import Playback
import Posix

/// The services a client's commands act on in its partition, as `mpd`'s `Partition`: the queue with the player
/// it drives (and the player's outputs), its volume memento and play time, and the idle events raised there.
///
/// Every client is in one partition, `default` at first; `newpartition` adds more, each with its own queue,
/// player and outputs (``PartitionList``).
///
/// Loop-confined.
final class Partition {
    /// The name `partition` and `listpartitions` show.
    let name: String
    /// The queue and playback state; drives the player.
    let playlist: Playlist
    /// The volume last set by a client or the state file (`mpd`'s mixer memento, saved as `sw_volume`); kept even
    /// without a mixer.
    var softwareVolume = 100
    /// The volume read from the mixers, shown again for up to a second (`mpd`'s memento: ``HardwareVolumeCache``).
    private var hardwareVolume = HardwareVolumeCache()
    /// Time its player spent playing, for `stats`.
    var playTime = PlayTime()
    private let raise: (IdleEvent, Partition) -> Void

    /// A partition over `playlist` whose idle events go to `raise` (with the partition, whose clients they reach).
    init(name: String, playlist: Playlist, raise: @escaping (IdleEvent, Partition) -> Void) {
        self.name = name
        self.playlist = playlist
        self.raise = raise
    }

    /// The player the queue drives.
    var player: any PlayerControl { self.playlist.player }

    /// The volume `status`, `getvol` and `volume` show: the mixers' (``PlayerControl/volume``), read at most once a
    /// second unless ``invalidateVolume()`` was called, as `mpd` reads it; `nil`: no mixer has a volume.
    func volume(now: UInt64 = MonotonicClock.now()) -> Int? {
        self.hardwareVolume.volume(now: now) { self.player.volume }
    }

    /// The mixers' volume may have changed (a volume set, a mixer's report, an output with a mixer enabled or
    /// disabled): the next ``volume(now:)`` reads it from them.
    func invalidateVolume() { self.hardwareVolume.invalidate() }

    /// Raises `event` for the clients of this partition only, as `mpd`'s `Partition::EmitIdle` (events that reach
    /// every client go through ``SharedServices/emit(_:)``).
    func emit(_ event: IdleEvent) { self.raise(event, self) }

    /// `partition`, `newpartition` and `delpartition` names: ASCII letters, digits, `-` and `_`, at least one.
    static func isValidName(_ name: String) -> Bool { ArgumentParser.isName(name, punctuation: "-_") }
}

/// Every partition, `default` first, in the order they were made (`listpartitions`), as `mpd`'s `Instance`
/// holds them; shared by every client's commands.
///
/// Loop-confined.
final class PartitionList {
    /// `mpd`'s limit: `newpartition` beyond it fails with `too many partitions`.
    static let maximumCount = 16

    /// Every partition, `default` first.
    private(set) var all: [Partition]
    private let make: (String) -> Partition

    /// The list with its `default` partition; `make` makes a new partition with an empty queue and a player
    /// without outputs.
    init(default partition: Partition, make: @escaping (String) -> Partition) {
        self.all = [partition]
        self.make = make
    }

    /// The partition every client starts in.
    var defaultPartition: Partition { self.all[0] }

    /// The partition named `name`, if any.
    func named(_ name: String) -> Partition? { self.all.first { $0.name == name } }

    /// Makes and adds a partition named `name` (the caller checked the name and the limit).
    @discardableResult
    func add(named name: String) -> Partition {
        let partition = self.make(name)
        self.all.append(partition)
        return partition
    }

    /// Removes `partition` (not the default one) and stops its player.
    func remove(_ partition: Partition) {
        guard partition !== self.defaultPartition else { return }
        self.all.removeAll { $0 === partition }
        partition.player.shutdown()
    }

    /// What ``moveOutput(named:to:)`` did.
    enum OutputMove {
        case moved, alreadyThere, noSuchOutput
    }

    /// Moves the output named `name` into `destination` from the partition that has it, leaving a dummy there
    /// (`moveoutput`); nothing to do when `destination` has it already.
    func moveOutput(named name: String, to destination: Partition) -> OutputMove {
        let owner = self.all.first { partition in
            partition.player.outputs.contains { $0.name == name && !$0.isDummy }
        }
        guard let owner else { return .noSuchOutput }
        guard owner !== destination else { return .alreadyThere }
        guard let output = owner.player.detachOutput(named: name) else { return .noSuchOutput }
        destination.player.attachOutput(output)
        return .moved
    }
}
