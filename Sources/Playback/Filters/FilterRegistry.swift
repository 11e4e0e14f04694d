// SPDX-License-Identifier: GPL-3.0-or-later

/// One stage of an output's filter chain, as configured: a plugin of `mpd` 0.23.12's filter registry that Debian's
/// build has (it has no `ffmpeg` or `hdcd`: those are `No such filter plugin` there too).
public enum PCMFilter: Sendable, Hashable {
    /// `null`: passes the PCM through.
    case null
    /// `route`: copies input channels to output channels (``RouteTable``).
    case route(RouteTable)
    /// `normalize`: converts to 16 bits and compresses (``NormalizeCompressor``); also what
    /// `volume_normalization "yes"` puts first in every output's chain.
    case normalize
}

/// The filter plugins, registered in one place as in `mpd` (`filter/Registry.cxx`), and the parsing of an
/// output's `filters "a,b"` list against the `filter { … }` templates. Pure; any thread.
public enum FilterRegistry {
    /// The plugin names, in `mpd`'s order (those Debian's `mpd` has).
    public static let plugins = ["null", "route", "normalize"]

    /// A `filter` block's parameters (its `name`, `plugin` and the plugin's own keys).
    public typealias Template = [String: String]

    /// One template turned into its filter, as `mpd`'s `filter_configured_new`.
    ///
    /// - Throws: `FilterError`: `No filter plugin specified`, `No such filter plugin: x`, or the plugin's own
    ///   (``RouteTable/init(routes:)``).
    public static func filter(_ template: Template) throws(FilterError) -> PCMFilter {
        guard let plugin = template["plugin"] else { throw FilterError("No filter plugin specified") }
        switch plugin {
        case "null": return .null
        case "route": return .route(try RouteTable(routes: template["routes"] ?? "0>0, 1>1"))
        case "normalize": return .normalize
        default: throw FilterError("No such filter plugin: \(plugin)")
        }
    }

    /// The chain of an output as `mpd` builds it: `normalize` first when `volume_normalization` is on, then each
    /// name of `filters` (split at commas, nothing trimmed, empty names skipped), looked up among `templates`
    /// by `name` (the first that has it).
    ///
    /// - Returns: The chain; the error that stopped it, if any: `mpd` logs it and keeps the filters set up
    ///   before it (`Filter template not found: x` or a template's error); the indices of the templates it
    ///   used (whose keys `mpd` then checks, see ``readKeys(of:)``).
    public static func chain(
        normalization: Bool, filters: String, templates: [Template]
    ) -> (chain: [PCMFilter], error: FilterError?, used: [Int]) {
        var chain: [PCMFilter] = normalization ? [.normalize] : []
        var used: [Int] = []
        for name in filters.split(separator: ",", omittingEmptySubsequences: true) {
            guard let index = templates.firstIndex(where: { $0["name"] == String(name) }) else {
                return (chain, FilterError("Filter template not found: \(name)"), used)
            }
            used.append(index)
            do throws(FilterError) {
                chain.append(try Self.filter(templates[index]))
            } catch {
                return (chain, error, used)
            }
        }
        return (chain, nil, used)
    }

    /// The keys of a template of `plugin` that `mpd` reads: any other key of a used template gets its
    /// `option 'x' on line N was not recognized`.
    public static func readKeys(of plugin: String?) -> Set<String> {
        var keys: Set<String> = ["name", "plugin"]
        if plugin == "route" { keys.insert("routes") }
        return keys
    }

}
