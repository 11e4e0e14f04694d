// SPDX-License-Identifier: GPL-3.0-or-later

import MPDProtocol
import Model

/// A storage plugin as `mpd`'s registry lists it: a name, the URI prefixes it takes (in any case) and the check its
/// constructor makes of a URI before any network traffic.
///
/// `mount` asks the plugins in `StoragePlugin.all` in order; the first that takes the URI makes the storage.
struct StoragePlugin: Sendable {
    /// The plugin's name, as `mpd --version` lists it.
    let name: String
    /// The URI prefixes, compared without regard to ASCII case.
    let prefixes: [String]
    /// Throws `mpd`'s error for a URI the plugin takes but cannot use.
    let check: @Sendable (String) throws(AckError) -> Void

    /// Whether the plugin takes `uri`.
    func supports(_ uri: String) -> Bool {
        self.prefixes.contains { URIScheme.hasPrefixIgnoringCase(uri.utf8, $0) }
    }

    /// The plugin that takes `uri`, in `mpd`'s order; `nil` for an unrecognised URI.
    static func plugin(for uri: String) -> StoragePlugin? {
        Self.all.first { $0.supports(uri) }
    }

    /// The storage plugins of Debian's `mpd` 0.23.12 that take URIs, in its order (`local`, which takes none, is not
    /// among them). `udisks` takes the prefix in any case but makes a storage only of a URI that starts with
    /// `udisks://` exactly (`mpd` then finds no other plugin).
    static let all: [StoragePlugin] = [
        StoragePlugin(name: "smbclient", prefixes: ["smb://"]) { _ throws(AckError) in },
        StoragePlugin(name: "udisks", prefixes: ["udisks://"]) { uri throws(AckError) in
            guard uri.utf8.starts(with: "udisks://".utf8) else { throw AckError(.arg, "Unrecognized storage URI") }
        },
        StoragePlugin(name: "nfs", prefixes: ["nfs://"]) { uri throws(AckError) in
            // The server, then the export's path: a URI without a slash after the server names no export.
            guard uri.utf8.dropFirst("nfs://".utf8.count).contains(UInt8(ascii: "/")) else {
                throw AckError(.unknown, "Malformed nfs:// URI")
            }
        },
        StoragePlugin(name: "curl", prefixes: ["http://", "https://"]) { _ throws(AckError) in },
    ]
}
