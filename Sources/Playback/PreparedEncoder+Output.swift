// SPDX-License-Identifier: GPL-3.0-or-later

import Encoders
import Model

extension PreparedEncoder {
    /// Opens a stream for an output (httpd, snapcast, shout, recorder): the encoder's failure as the output's.
    ///
    /// - Returns: the encoder and the format it takes (the output converts to it).
    public func openForOutput(_ format: AudioFormat) throws(OutputError) -> (encoder: any Encoder, format: AudioFormat)
    {
        do throws(EncoderError) {
            return try self.open(format)
        } catch {
            throw OutputError(error.message)
        }
    }
}
