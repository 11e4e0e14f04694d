// SPDX-License-Identifier: GPL-3.0-or-later

import Library
import MPDProtocol

extension Server {
    /// What the library service reports becomes idle events (`update` when a job starts or ends, `database` when
    /// one modified the library), and a new snapshot updates the queue's songs (or only where they are held, after
    /// a mount or an unmount).
    func libraryReported(_ event: LibraryService.Event) {
        switch event {
        case .updateStarted:
            self.emit(.update)
        case .updateFinished(_, let modified, let database, let replaced):
            if let database { self.databaseChanged(database, replaced: replaced) }
            self.emit(.update)
            if modified { self.emit(.database) }
        case .mountsChanged(let database):
            // `mount` and `unmount` tell clients themselves.
            self.snapshotReplaced(database)
        }
    }
}
