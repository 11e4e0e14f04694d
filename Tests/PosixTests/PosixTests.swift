// SPDX-License-Identifier: GPL-3.0-or-later

import Glibc
import Testing

@testable import Posix

struct SocketAddressTests {
    @Test func ipv4RoundTrip() throws {
        let address = SocketAddress.ipv4(host: "127.0.0.1", port: 6600)
        let decoded = try address.withSockAddr { pointer, length in SocketAddress(storage: pointer, length: length) }
        #expect(decoded == address)
        #expect(address.description == "127.0.0.1:6600")
    }

    @Test func ipv6RoundTrip() throws {
        let address = SocketAddress.ipv6(host: "::1", port: 6602)
        let decoded = try address.withSockAddr { pointer, length in SocketAddress(storage: pointer, length: length) }
        #expect(decoded == address)
        #expect(address.description == "[::1]:6602")
    }

    @Test func unixAndAbstractRoundTrip() throws {
        for address in [SocketAddress.unix(path: "/tmp/x.sock"), .abstract(name: "fermata")] {
            let decoded = try address.withSockAddr { pointer, length in SocketAddress(storage: pointer, length: length)
            }
            #expect(decoded == address)
            #expect(address.isLocal)
        }
    }

    @Test func badTextThrows() {
        #expect(throws: SocketAddressError.self) {
            try SocketAddress.ipv4(host: "not-an-address", port: 1).withSockAddr { _, _ in () }
        }
        #expect(throws: SocketAddressError.self) {
            try SocketAddress.unix(path: String(repeating: "x", count: 200)).withSockAddr { _, _ in () }
        }
    }

    @Test func resolvesLocalhostNumerically() throws {
        let addresses = try SocketAddress.resolve(host: "127.0.0.1", port: 7)
        #expect(addresses == [.ipv4(host: "127.0.0.1", port: 7)])
    }

    @Test func aServiceThatDoesNotResolveIsNamedAsMpdNamesIt() {
        #expect(
            throws: SocketAddressError.resolve(
                host: "127.0.0.1", service: "x", message: "Servname not supported for ai_socktype")
        ) { try SocketAddress.resolve(host: "127.0.0.1", service: "x") }
        let error = SocketAddressError.resolve(host: "h", service: "0", message: "Name or service not known")
        #expect(error.description == "Failed to resolve 'h':'0': Name or service not known")
    }
}

struct SyscallTests {
    @Test func errorsNameTheCall() {
        do {
            _ = try syscall("open") { open("/nonexistent/fermata", O_RDONLY) }
            Issue.record("open succeeded")
        } catch {
            #expect(error.function == "open")
            #expect(error.errno == .noSuchFile)
        }
    }

    @Test func pipeIsNonBlocking() throws {
        let (reader, writer) = try FileDescriptor.pipe()
        defer {
            reader.close()
            writer.close()
        }
        var buffer = [UInt8](repeating: 0, count: 8)
        let empty = try buffer.withUnsafeMutableBytes { try reader.read(into: $0) }
        guard case .wouldBlock = empty else {
            Issue.record("read on an empty pipe did not report would-block")
            return
        }
        _ = try [UInt8(1), 2, 3].withUnsafeBytes { try writer.write($0) }
        let full = try buffer.withUnsafeMutableBytes { try reader.read(into: $0) }
        guard case .processed(let count) = full else {
            Issue.record("no data")
            return
        }
        #expect(count == 3)
    }

    @Test func listenOnEphemeralPortReportsIt() throws {
        let fd = try Socket.listen(on: .ipv4(host: "127.0.0.1", port: 0))
        defer { fd.close() }
        let bound = try Socket.localAddress(fd)
        #expect(bound?.port != nil && bound?.port != 0)
        #expect(Socket.isListeningStreamSocket(fd))
    }

    @Test func secondBindReportsAddressInUse() throws {
        let fd = try Socket.listen(on: .ipv4(host: "127.0.0.1", port: 0))
        defer { fd.close() }
        let port = try #require(try Socket.localAddress(fd)?.port)
        do {
            let second = try Socket.listen(on: .ipv4(host: "127.0.0.1", port: port))
            second.close()
            Issue.record("second bind succeeded")
        } catch let error as SystemCallError {
            #expect(error.function == "bind")
            #expect(error.errno == .addressInUse)
        }
    }
}

@Suite struct SocketAddressNumericHostTests {
    @Test(arguments: [
        (SocketAddress.ipv4(host: "127.0.0.1", port: 1), "127.0.0.1"),
        (.ipv6(host: "::1", port: 1), "::1"),
        (.ipv6(host: "::ffff:192.0.2.7", port: 1), "192.0.2.7"),
        (.ipv6(host: "::FFFF:192.0.2.7", port: 1), "192.0.2.7"),
        (.ipv6(host: "2001:db8::ffff:1", port: 1), "2001:db8::ffff:1"),
    ])
    func numericHostAsMPDComparesIt(address: SocketAddress, host: String) {
        #expect(address.numericHost == host)
    }

    @Test func unixAddressesHaveNoHost() {
        #expect(SocketAddress.unix(path: "/s").numericHost == nil)
        #expect(SocketAddress.abstract(name: "s").numericHost == nil)
    }
}
