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
