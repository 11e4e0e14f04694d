// SPDX-License-Identifier: GPL-3.0-or-later

/// What a transfer's libcurl callbacks hand their header lines and body blocks to: the object whose unretained
/// pointer is the transfer's `CURLOPT_HEADERDATA` and `CURLOPT_WRITEDATA`. Called on the thread driving the
/// transfer.
protocol CurlTransferHandler: AnyObject {
    /// One header line, with its CR LF; `false` aborts the transfer.
    func header(_ line: UnsafeRawBufferPointer) -> Bool
    /// A block of the body: the byte count taken, `CURL_WRITEFUNC_PAUSE`, or 0 to abort.
    func data(_ block: UnsafeRawBufferPointer) -> Int
}

/// The handler a callback's `userdata` points to (unretained: the handler outlives its transfer).
private func handler(_ userdata: UnsafeMutableRawPointer) -> any CurlTransferHandler {
    // The pointer is always a CurlTransferHandler's, set by the transfer's own setup.
    Unmanaged<AnyObject>.fromOpaque(userdata).takeUnretainedValue() as! any CurlTransferHandler
}

/// libcurl's header callback: the line goes to the handler in `userdata`.
func curlHeaderCallback(
    _ pointer: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int, _ userdata: UnsafeMutableRawPointer?
) -> Int {
    guard let userdata else { return 0 }
    let length = size * count
    return handler(userdata).header(UnsafeRawBufferPointer(start: pointer, count: length)) ? length : 0
}

/// libcurl's write callback: the block goes to the handler in `userdata`.
func curlWriteCallback(
    _ pointer: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int, _ userdata: UnsafeMutableRawPointer?
) -> Int {
    guard let userdata else { return 0 }
    let length = size * count
    guard length > 0 else { return 0 }
    return handler(userdata).data(UnsafeRawBufferPointer(start: pointer, count: length))
}
