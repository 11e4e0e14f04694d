// SPDX-License-Identifier: GPL-3.0-or-later

/// `mpd` 0.23.12's check of a configuration's blocks once it has started (`config/Check.cxx`, called from
/// `Main.cxx` after the state file is read): for each block some part of the program used, one warning per line
/// nothing read, `option 'x' on line N was not recognized` (its `config` domain, no file name).
///
/// `mpd` walks its block lists in the order of its block kinds (``kindOrder``: outputs first, neighbors last),
/// each list in reading order, each block's lines in block order; so the warnings of a `decoder` block come after
/// those of every `audio_output` block, wherever the two are in the file. A block nothing used (a plugin the program
/// lacks, a disabled plugin, an unused filter template, `input_cache`, which `mpd` reads without marking it) has
/// none: the parts that read the blocks report only the lines they left unread, and this type puts them in order.
///
/// A value type; safe from any thread.
public struct BlockCheck: Sendable, Hashable {
    /// The block kinds in the order `mpd` checks them (its `ConfigBlockOption` order).
    public static let kindOrder = [
        "audio_output", "decoder", "input", "input_cache", "playlist_plugin", "resampler", "filter", "database",
        "neighbors",
    ]

    /// The blocks `mpd` checks, in its order.
    public let blocks: [ConfigBlock]

    /// No block: nothing to warn about.
    public init() { self.blocks = [] }

    /// The blocks of `blocks` (in reading order) that `mpd` checks, in its order.
    public init(_ blocks: [ConfigBlock]) {
        self.blocks = Self.kindOrder.flatMap { kind in blocks.filter { $0.name == kind } }
    }

    /// `mpd`'s warnings about `unread`, the lines the program's parts left unread in the blocks they used, in
    /// `mpd`'s order; a line of no checked block is left out.
    public func warnings(unread: [ConfigParameter]) -> [String] {
        let unread = Set(unread)
        return self.blocks.flatMap { block in
            block.params.filter { unread.contains($0) }.map(Self.warning)
        }
    }

    /// `mpd`'s warning about a line nothing read (without its domain).
    public static func warning(_ line: ConfigParameter) -> String {
        "option '\(line.name)' on line \(line.line) was not recognized"
    }
}
