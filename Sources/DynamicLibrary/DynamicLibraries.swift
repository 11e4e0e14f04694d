// SPDX-License-Identifier: GPL-3.0-or-later

import Glibc
import Synchronization

/// Writes `message` and a newline on standard error, in one `write`: how a library that cannot be loaded is
/// reported by default (before any logger exists, and from any thread). Any thread.
public func reportOnStandardError(_ message: String) {
    let line = Array("\(message)\n".utf8)
    _ = line.withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
}

/// Why a set of libraries cannot be loaded: `dlopen` could not open one, or a function was not found (`dlsym`).
public struct DynamicLibraryError: Error, Sendable, Hashable, CustomStringConvertible {
    /// `dlopen` or `dlsym`.
    public var function: String
    /// `dlerror`'s text, or which function is missing.
    public var message: String

    /// Creates an error.
    public init(function: String, message: String) {
        self.function = function
        self.message = message
    }

    public var description: String { "\(self.function): \(self.message)" }
}

/// Shared libraries a C wrapper module loads on first use instead of linking them, and the table of functions it
/// resolved from them: the loading, counting and reporting every such wrapper needs (FFmpeg's, libchromaprint's).
///
/// The wrapper owns the table's type (a C struct of function pointers from its shim) and the resolving of it
/// (`resolve` receives the handles `dlopen` gave, in the order of `names`); this class never sees a C
/// library's types. The first `acquire()` opens the libraries (`RTLD_NOW`, `RTLD_LOCAL` unless `global`, in
/// order), resolves the table, runs `configure` on it (process-wide set-up of the library, redone after every
/// load) and counts one use; `release()` ends a use. They stay loaded until `unloadIfIdle()` closes them with no
/// use left (never by itself: a wrapper decides when closing is worth what the libraries lose on every load).
///
/// When they cannot be loaded, every `acquire()` throws the same error and `reportFailure` is told once why.
///
/// Thread-safe: the state is under a lock, taken per `acquire()` and `release()` (per object, never per sample).
public final class DynamicLibraries<Functions>: @unchecked Sendable {
    // @unchecked: `Functions` is a C struct of function pointers (immutable values, safe on any thread) that
    // the importer does not mark Sendable; everything mutable is under `state`'s lock.

    private struct Loaded {
        var handles: [UnsafeMutableRawPointer]
        var functions: Functions
    }

    private struct State {
        var loaded: Loaded?
        /// Why loading failed; then set for good.
        var failure: DynamicLibraryError?
        var users = 0
        var loads = 0
        var unloads = 0
    }

    /// The libraries' names (any name or path `dlopen` takes), in loading order.
    public let names: [String]
    /// Whether their symbols are opened `RTLD_GLOBAL`: for a library whose own plugins use its functions
    /// without linking it (libao's driver plugins).
    public let global: Bool
    private let resolve: @Sendable ([UnsafeMutableRawPointer]) -> Result<Functions, DynamicLibraryError>
    private let configure: @Sendable (Functions) -> Void
    private let reportFailure: @Sendable (String) -> Void
    private let state = Mutex(State())

    /// Libraries loaded from `names` on first use.
    ///
    /// - Parameters:
    ///   - resolve: Fills the table from the handles (one per name), or says what is missing (`dlsym`); runs
    ///     under the lock, once per load.
    ///   - configure: Process-wide set-up after each load, under the lock.
    ///   - reportFailure: Told once why the libraries cannot be loaded (`DynamicLibraryError.description`).
    ///   - global: Open them `RTLD_GLOBAL` instead of `RTLD_LOCAL`.
    public init(
        names: [String],
        resolve: @escaping @Sendable ([UnsafeMutableRawPointer]) -> Result<Functions, DynamicLibraryError>,
        configure: @escaping @Sendable (Functions) -> Void = { _ in },
        reportFailure: @escaping @Sendable (String) -> Void,
        global: Bool = false
    ) {
        self.names = names
        self.global = global
        self.resolve = resolve
        self.configure = configure
        self.reportFailure = reportFailure
    }

    /// Libraries loaded from `names` on first use whose table a C shim fills: `fill` writes every function into
    /// the table from the handles and returns `nil`, or the name of the first function it did not find (then
    /// the load fails with `dlsym`: "NAME not found in `what`").
    ///
    /// - Parameters:
    ///   - reportFailure: Told once why the libraries cannot be loaded (by default on stderr, after `prefix`).
    ///   - global: Open them `RTLD_GLOBAL` instead of `RTLD_LOCAL`.
    public convenience init(
        names: [String], what: String, prefix: String,
        fill: @escaping @Sendable (UnsafeMutablePointer<Functions>, [UnsafeMutableRawPointer]) -> UnsafePointer<CChar>?,
        configure: @escaping @Sendable (Functions) -> Void = { _ in },
        reportFailure: (@Sendable (String) -> Void)? = nil, global: Bool = false
    ) {
        self.init(
            names: names,
            resolve: { handles in
                let table = UnsafeMutablePointer<Functions>.allocate(capacity: 1)
                defer { table.deallocate() }
                if let missing = fill(table, handles) {
                    let message = "\(String(cString: missing)) not found in \(what)"
                    return .failure(DynamicLibraryError(function: "dlsym", message: message))
                }
                return .success(table.pointee)
            },
            configure: configure,
            reportFailure: reportFailure ?? { message in reportOnStandardError("\(prefix)\(message)") },
            global: global)
    }

    /// Whether the libraries are loaded now.
    public var isLoaded: Bool { self.state.withLock { $0.loaded != nil } }
    /// How many uses are under way.
    public var users: Int { self.state.withLock { $0.users } }
    /// How many times the libraries were loaded, and closed.
    public var loadCount: Int { self.state.withLock { $0.loads } }
    public var unloadCount: Int { self.state.withLock { $0.unloads } }

    /// One more use of the libraries, loading them first if they are not loaded; pair it with `release()`.
    ///
    /// Locks; a load opens and relocates the libraries (milliseconds to tens of them).
    /// - Returns: The resolved functions, valid until the matching `release()`.
    /// - Throws: `DynamicLibraryError` when the libraries cannot be loaded (the same error every time).
    public func acquire() throws(DynamicLibraryError) -> Functions {
        let (result, report) = self.state.withLock { state -> (Result<Functions, DynamicLibraryError>, String?) in
            if let failure = state.failure { return (.failure(failure), nil) }
            if state.loaded == nil {
                switch self.load() {
                case .success(let loaded):
                    self.configure(loaded.functions)
                    state.loaded = loaded
                    state.loads += 1
                case .failure(let error):
                    state.failure = error
                    return (.failure(error), error.description)
                }
            }
            guard let loaded = state.loaded else { preconditionFailure("loaded above") }
            state.users += 1
            return (.success(loaded.functions), nil)
        }
        if let report { self.reportFailure(report) }
        return try result.get()
    }

    /// The functions of libraries a wrapper never closes, loading them on first use: `acquire()` with no use left
    /// to end.
    ///
    /// Locks; a load opens and relocates the libraries.
    /// - Throws: `DynamicLibraryError` when the libraries cannot be loaded (the same error every time).
    public func permanentFunctions() throws(DynamicLibraryError) -> Functions {
        let functions = try self.acquire()
        self.release()
        return functions
    }

    /// Ends a use `acquire()` began; the libraries stay loaded until `unloadIfIdle()`.
    ///
    /// Locks; any thread.
    public func release() {
        self.state.withLock { state in
            precondition(state.users > 0, "\(self.names) released more often than acquired")
            state.users -= 1
        }
    }

    /// Closes the libraries if nothing uses them. Any thread.
    ///
    /// - Returns: Whether they were closed now.
    @discardableResult
    public func unloadIfIdle() -> Bool {
        self.state.withLock { state in
            guard state.users == 0, let loaded = state.loaded else { return false }
            // Reverse order of loading; libraries that dependencies mark NODELETE stay mapped.
            for handle in loaded.handles.reversed() { dlclose(handle) }
            state.loaded = nil
            state.unloads += 1
            return true
        }
    }

    /// Opens the libraries and resolves the table; closes what it opened when something is missing.
    private func load() -> Result<Loaded, DynamicLibraryError> {
        var handles: [UnsafeMutableRawPointer] = []
        func fail(_ error: DynamicLibraryError) -> Result<Loaded, DynamicLibraryError> {
            for handle in handles.reversed() { dlclose(handle) }
            return .failure(error)
        }
        for name in self.names {
            guard let handle = dlopen(name, RTLD_NOW | (self.global ? RTLD_GLOBAL : RTLD_LOCAL)) else {
                let message = dlerror().map { String(cString: $0) } ?? "cannot load \(name)"
                return fail(DynamicLibraryError(function: "dlopen", message: message))
            }
            handles.append(handle)
        }
        switch self.resolve(handles) {
        case .success(let functions): return .success(Loaded(handles: handles, functions: functions))
        case .failure(let error): return fail(error)
        }
    }
}
