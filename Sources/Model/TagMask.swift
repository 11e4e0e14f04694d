// SPDX-License-Identifier: GPL-3.0-or-later

/// A set of tag types, stored as a bit mask and iterated in wire order.
public struct TagMask: Sendable, Hashable, Sequence {
    /// The raw bits, one per `TagType.rawValue`.
    public private(set) var bits: UInt64

    /// Creates a mask from raw bits.
    public init(bits: UInt64) { self.bits = bits }

    /// The empty mask.
    public static let none = TagMask(bits: 0)

    /// Every tag type.
    public static let all = TagMask(TagType.allCases)

    /// What `mpd` 0.23 enables when `metadata_to_use` is not set: every tag but Comment.
    public static let defaultMetadata: TagMask = {
        var mask = TagMask.all
        mask.remove(.comment)
        return mask
    }()

    /// Creates a mask holding the given tag types.
    public init(_ tags: some Sequence<TagType>) {
        self.bits = 0
        for tag in tags { self.insert(tag) }
    }

    /// Whether the mask holds `tag`.
    @inlinable
    public func contains(_ tag: TagType) -> Bool { self.bits & (1 << UInt64(tag.rawValue)) != 0 }

    /// Adds `tag`.
    public mutating func insert(_ tag: TagType) { self.bits |= 1 << UInt64(tag.rawValue) }

    /// Removes `tag`.
    public mutating func remove(_ tag: TagType) { self.bits &= ~(1 << UInt64(tag.rawValue)) }

    /// The tags held by both masks.
    public func intersection(_ other: TagMask) -> TagMask { TagMask(bits: self.bits & other.bits) }

    /// The tag types held, in wire order.
    public func makeIterator() -> some IteratorProtocol<TagType> {
        TagType.allCases.lazy.filter { self.contains($0) }.makeIterator()
    }
}
