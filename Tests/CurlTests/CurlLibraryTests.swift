// SPDX-License-Identifier: GPL-3.0-or-later

import TestTools
import Testing

@testable import Curl

/// libcurl loaded on first use, `curl_global_init` with it.
@Suite struct CurlLibraryTests {
    @Test func loadedOnceAndKept() throws {
        let library = CurlLibrary(soname: CurlLibrary.headerSoname)
        #expect(!library.isLoaded)
        _ = try library.functions()
        _ = try library.functions()
        #expect(library.isLoaded)
        #expect(library.loadCount == 1)
    }

    /// A library that cannot be loaded fails every use, reported once with dlopen's reason.
    @Test func missingLibraryFailsEveryUseReportedOnce() {
        let reports = Reports()
        let library = CurlLibrary(soname: "/nonexistent/libcurl-gnutls.so.4", reportFailure: reports.reporter)
        for _ in 0..<3 {
            #expect(throws: (any Error).self) { try library.functions() }
        }
        #expect(!library.isLoaded)
        #expect(reports.all.count == 1)
        #expect(reports.all.first?.contains("/nonexistent/libcurl-gnutls.so.4") == true)
    }
}
