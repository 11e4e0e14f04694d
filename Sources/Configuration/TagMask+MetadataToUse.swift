// SPDX-License-Identifier: GPL-3.0-or-later

import Model

extension TagMask {
    /// Parses a `metadata_to_use` value as `mpd` 0.23 does.
    ///
    /// - `none` (ASCII case-insensitive, exactly) or the empty string: no tags.
    /// - A value whose very first character is `+` or `-` changes ``TagMask/defaultMetadata``; any other value
    ///   starts from no tags. `mpd` decides this on the first character, so `" +comment"` means only Comment.
    /// - Items are separated by `,`, white space around them is ignored, an empty item is an error. An item
    ///   may start with `+` (add) or `-` (remove); the sign carries on to the following items until another sign.
    ///
    /// - Parameter value: The unquoted value.
    /// - Returns: The mask, or the first item that is not a tag name.
    static func parsing(metadataToUse value: String) -> Result<TagMask, MetadataItemError> {
        if value.lowercased() == "none" || value.isEmpty { return .success(.none) }
        var mask = value.hasPrefix("+") || value.hasPrefix("-") ? TagMask.defaultMetadata : TagMask.none
        var adding = true
        for rawItem in value.split(separator: ",", omittingEmptySubsequences: false) {
            var item = rawItem.trimmingASCIISpace()
            if item.hasPrefix("+") || item.hasPrefix("-") {
                adding = item.hasPrefix("+")
                item = item.dropFirst().trimmingASCIISpace()
            }
            guard let tag = TagType(parsing: item) else { return .failure(MetadataItemError(item: String(item))) }
            if adding { mask.insert(tag) } else { mask.remove(tag) }
        }
        return .success(mask)
    }

    /// A `metadata_to_use` item that is not a tag name.
    struct MetadataItemError: Error {
        /// The item, trimmed and without its sign.
        var item: String
    }
}

extension Substring {
    /// The substring without leading and trailing ASCII white space.
    fileprivate func trimmingASCIISpace() -> Substring {
        var result = self
        while let first = result.utf8.first, ConfigLineScanner.isSpace(first) { result = result.dropFirst() }
        while let last = result.utf8.last, ConfigLineScanner.isSpace(last) { result = result.dropLast() }
        return result
    }
}
