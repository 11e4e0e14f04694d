// SPDX-License-Identifier: GPL-3.0-or-later

/// The settings of `mpd`'s sidplay plugin (its `decoder { plugin "sidplay" }` block), with `mpd`'s defaults.
public struct SidplayOptions: Sendable, Hashable {
    /// `songlength_database`: the path of an HVSC `Songlengths.md5` file, the only source of song lengths;
    /// `nil` (the default): no lengths.
    public var songlengthDatabase: String?
    /// `default_songlength`: the length in seconds played when the database has none (0, the default: the
    /// song plays until stopped). It is not stored in the library.
    public var defaultSonglength: Int
    /// `default_genre`: a `Genre` tag given to every song; empty (the default): none.
    public var defaultGenre: String
    /// `all_files_are_containers`: whether a file of one song is a container too (`tune_001.sid`); `true`.
    public var allFilesAreContainers: Bool
    /// `filter`: whether the SID filter is emulated; `true`.
    public var filter: Bool
    /// `kernal`: the path of a C64 kernal ROM image (8 KiB); `nil`: libsidplayfp's replacement.
    public var kernal: String?
    /// `basic`: the path of a C64 BASIC ROM image (8 KiB); `nil`: none.
    public var basic: String?

    /// Creates settings; every parameter defaults to `mpd`'s default.
    public init(
        songlengthDatabase: String? = nil, defaultSonglength: Int = 0, defaultGenre: String = "",
        allFilesAreContainers: Bool = true, filter: Bool = true, kernal: String? = nil, basic: String? = nil
    ) {
        self.songlengthDatabase = songlengthDatabase
        self.defaultSonglength = defaultSonglength
        self.defaultGenre = defaultGenre
        self.allFilesAreContainers = allFilesAreContainers
        self.filter = filter
        self.kernal = kernal
        self.basic = basic
    }
}
