// SPDX-License-Identifier: GPL-3.0-or-later

import DynamicLibrary
import Glibc
import Synchronization
import TestTools
import Testing

/// What the tests resolve: libm's `sqrt`, through a table as a C shim's.
struct MathFunctions {
    var sqrt: @convention(c) (Double) -> Double
}

/// A counter the `configure` closure bumps.
final class Counter: Sendable {
    private let value = Mutex(0)
    func bump() { self.value.withLock { $0 += 1 } }
    var count: Int { self.value.withLock { $0 } }
}

@Suite struct DynamicLibrariesTests {
    static func math(
        _ names: [String] = ["libm.so.6"], symbol: String = "sqrt", reports: Reports = Reports(),
        configured: Counter = Counter()
    ) -> DynamicLibraries<MathFunctions> {
        DynamicLibraries(
            names: names,
            resolve: { handles in
                guard let address = dlsym(handles[handles.count - 1], symbol) else {
                    return .failure(DynamicLibraryError(function: "dlsym", message: "\(symbol) not found"))
                }
                return .success(
                    MathFunctions(sqrt: unsafeBitCast(address, to: (@convention(c) (Double) -> Double).self)))
            },
            configure: { _ in configured.bump() },
            reportFailure: reports.reporter)
    }

    @Test func loadedOnFirstAcquireCountedAndClosedWhenIdle() throws {
        let configured = Counter()
        let libraries = Self.math(configured: configured)
        #expect(!libraries.isLoaded)
        #expect(libraries.loadCount == 0)
        #expect(configured.count == 0)

        let functions = try libraries.acquire()
        #expect(functions.sqrt(64) == 8)
        #expect(libraries.isLoaded)
        #expect(libraries.users == 1)
        _ = try libraries.acquire()
        #expect(libraries.users == 2)
        #expect(libraries.loadCount == 1)
        #expect(configured.count == 1)
        #expect(!libraries.unloadIfIdle())

        libraries.release()
        libraries.release()
        #expect(libraries.users == 0)
        #expect(libraries.isLoaded)
        #expect(libraries.unloadIfIdle())
        #expect(!libraries.isLoaded)
        #expect(libraries.unloadCount == 1)
        #expect(!libraries.unloadIfIdle())

        // Loaded and configured again on the next use.
        #expect(try libraries.acquire().sqrt(16) == 4)
        #expect(libraries.loadCount == 2)
        #expect(configured.count == 2)
        libraries.release()
    }

    @Test func aMissingLibraryFailsEveryAcquireReportedOnce() {
        let reports = Reports()
        let libraries = Self.math(["libm.so.6", "/nonexistent/libnothing.so.1"], reports: reports)
        for _ in 0..<3 {
            #expect {
                _ = try libraries.acquire()
            } throws: { error in
                (error as? DynamicLibraryError)?.function == "dlopen"
            }
        }
        #expect(!libraries.isLoaded)
        #expect(libraries.users == 0)
        #expect(libraries.loadCount == 0)
        #expect(reports.all.count == 1)
        #expect(reports.all.first?.contains("/nonexistent/libnothing.so.1") == true)
    }

    @Test func aMissingFunctionFailsLikeAMissingLibrary() {
        let reports = Reports()
        let libraries = Self.math(symbol: "fermata_no_such_function", reports: reports)
        #expect(throws: DynamicLibraryError(function: "dlsym", message: "fermata_no_such_function not found")) {
            _ = try libraries.acquire()
        }
        #expect(throws: DynamicLibraryError.self) { _ = try libraries.acquire() }
        #expect(!libraries.isLoaded)
        #expect(reports.all == ["dlsym: fermata_no_such_function not found"])
    }

    @Test func permanentFunctionsLoadOnceAndHoldNoUse() throws {
        let configured = Counter()
        let libraries = Self.math(configured: configured)
        #expect(try libraries.permanentFunctions().sqrt(9) == 3)
        #expect(try libraries.permanentFunctions().sqrt(4) == 2)
        #expect(libraries.isLoaded)
        #expect(libraries.users == 0)
        #expect(libraries.loadCount == 1)
        #expect(configured.count == 1)

        let reports = Reports()
        let missing = Self.math(symbol: "fermata_no_such_function", reports: reports)
        for _ in 0..<2 { #expect(throws: DynamicLibraryError.self) { _ = try missing.permanentFunctions() } }
        #expect(missing.users == 0)
        #expect(reports.all == ["dlsym: fermata_no_such_function not found"])
    }
}
