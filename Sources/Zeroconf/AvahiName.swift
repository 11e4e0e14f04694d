// SPDX-License-Identifier: GPL-3.0-or-later

import CAvahi

/// Avahi's rules for service names. Any thread (pure functions of libavahi-common).
enum AvahiName {
    /// `avahi_alternative_service_name`: the name to try after a collision (`name` → `name #2` → `name #3`…),
    /// kept within a DNS label.
    static func alternative(_ name: String) -> String {
        guard let next = avahi_alternative_service_name(name) else { return name + " #2" }
        defer { avahi_free(next) }
        return String(cString: next)
    }
}
