// SPDX-License-Identifier: GPL-3.0-or-later

import Model

/// What `find`, `search`, `findadd`, `searchadd` and `searchaddpl` select: a filter, an optional sort and a
/// window (`mpd`'s `DatabaseSelection`).
///
/// The walk root is `filter.base` (when set): a base that is neither a directory nor a song fails the command
/// with `ACK [50@…] No such directory`.
public struct FilterSelection: Sendable {
    /// The filter.
    public var filter: SongFilter
    /// `sort TYPE`, if given.
    public var sort: SortOrder?
    /// `window START:END`, `.all` if not given.
    public var window: WindowRange

    /// Creates a selection.
    public init(filter: SongFilter, sort: SortOrder? = nil, window: WindowRange = .all) {
        self.filter = filter
        self.sort = sort
        self.window = window
    }

    /// Parses `FILTER… [sort TYPE] [window START:END]` as `mpd` 0.23.12 does.
    ///
    /// `window` is recognised only as the last pair and taken off first, then `sort` as the new last pair; the
    /// keywords are case-sensitive. Anything else (a misplaced `sort`, `window`, `position`) reaches the filter
    /// parser and fails there, usually with `Unknown filter type`. Errors come in that order: window, sort,
    /// filter. For `findadd`/`searchadd`/`searchaddpl`, remove `position P` first (`splitPosition(_:)`). `regex`
    /// compiles `=~` and `!~` operands.
    ///
    /// - Throws: `AckError` code 2, from `WindowRange.parse`, `SortOrder.parse` or `FilterParser.parse`.
    public static func parse(
        arguments: ArraySlice<String>, foldCase: Bool, regex: any FilterRegularExpression.Type
    ) throws(AckError) -> FilterSelection {
        var arguments = arguments
        var window = WindowRange.all
        if arguments.count >= 2 && arguments[arguments.endIndex - 2] == "window" {
            window = try WindowRange.parse(arguments[arguments.endIndex - 1])
            arguments.removeLast(2)
        }
        var sort: SortOrder?
        if arguments.count >= 2 && arguments[arguments.endIndex - 2] == "sort" {
            sort = try SortOrder.parse(arguments[arguments.endIndex - 1])
            arguments.removeLast(2)
        }
        let filter = try FilterParser.parse(arguments: arguments, foldCase: foldCase, regex: regex)
        return FilterSelection(filter: filter, sort: sort, window: window)
    }

    /// Splits a trailing `position P` pair off (`findadd`, `searchadd`, `searchaddpl`), as `mpd` does before
    /// parsing the rest: the keyword is case-sensitive and only recognised as the last pair.
    ///
    /// - Returns: the remaining arguments and P's text, or `nil` when there is no such pair.
    public static func splitPosition(_ arguments: ArraySlice<String>) -> (rest: ArraySlice<String>, position: String?) {
        guard arguments.count >= 2, arguments[arguments.endIndex - 2] == "position" else { return (arguments, nil) }
        return (arguments.dropLast(2), arguments[arguments.endIndex - 1])
    }
}
