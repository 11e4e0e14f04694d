// SPDX-License-Identifier: GPL-3.0-or-later

/// The `input { plugin "…" … }` blocks of a configuration. `mpd` 0.23.12 finds and reads them exactly as it
/// does `decoder` blocks (`input/Init.cxx`: `FindBlock(INPUT, "plugin", name)`, then `enabled`, then the
/// plugin's keys), so they share ``DecoderBlocks``' rules and messages: a block without `plugin` is fatal
/// (`block without 'plugin' in line N`), the first block naming a plugin configures it, `enabled "no"` leaves
/// it out, and unread keys are warned about.
public typealias InputBlocks = DecoderBlocks

/// One input plugin's `input` block, read key by key with `mpd`'s parsers and error texts (see
/// ``DecoderPluginSettings``).
public typealias InputPluginSettings = DecoderPluginSettings

/// The `playlist_plugin { name "…" … }` blocks of a configuration. `mpd` 0.23.12 finds them as it finds
/// `decoder` blocks, by `name` rather than `plugin` (`playlist/PlaylistRegistry.cxx`: `FindBlock(PLAYLIST_PLUGIN,
/// "name", name)`, then `enabled`, then `as_directory`): a block without `name` is fatal (`block without 'name'
/// in line N`), the first block naming a plugin configures it, `enabled "no"` leaves it out, and the keys of an
/// enabled plugin's block that nobody read are warned about. Build them with `PlaylistPluginBlocks(blocks,
/// key: "name")`.
public typealias PlaylistPluginBlocks = DecoderBlocks
