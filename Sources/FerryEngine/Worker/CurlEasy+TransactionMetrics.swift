import Curl
import FerryCore
import Foundation

extension CurlEasy {
    /// The metrics of the exchange the handle just finished, from curl's phase timings
    /// (microseconds since `started`). A reused connection has no DNS, connect or TLS phase.
    func transactionMetrics(
        request: TransferRequest, response: HTTPResponseSnapshot?, started: Date, isProxyConnection: Bool
    ) -> TransactionMetrics {
        let timings = self.timings
        func date(_ microseconds: Int64) -> Date? {
            microseconds > 0 ? started.addingTimeInterval(Double(microseconds) / 1_000_000) : nil
        }
        var metrics = TransactionMetrics(request: request, response: response, resourceFetchType: .networkLoad)
        metrics.fetchStartDate = started
        let reused = newConnectionCount == 0
        metrics.isReusedConnection = reused
        if !reused {
            if timings.nameLookup > 0 {
                metrics.domainLookupStartDate = started
                metrics.domainLookupEndDate = date(timings.nameLookup)
            }
            metrics.connectStartDate = date(timings.nameLookup) ?? started
            if timings.appConnect > 0 {
                metrics.secureConnectionStartDate = date(timings.connect)
                metrics.secureConnectionEndDate = date(timings.appConnect)
            }
            metrics.connectEndDate = date(max(timings.connect, timings.appConnect))
        }
        metrics.requestStartDate = date(timings.preTransfer)
        metrics.requestEndDate = date(max(timings.preTransfer, min(timings.startTransfer, timings.total)))
        metrics.responseStartDate = date(timings.startTransfer)
        metrics.responseEndDate = date(timings.total)
        metrics.networkProtocolName = networkProtocolName
        metrics.isProxyConnection = isProxyConnection
        metrics.countOfRequestHeaderBytesSent = Int64(requestBytes)
        metrics.countOfRequestBodyBytesSent = uploadedBytes
        metrics.countOfResponseHeaderBytesReceived = Int64(headerBytes)
        metrics.countOfResponseBodyBytesReceived = downloadedBytes
        // localAddress and localPort stay unset: they are Ferry's own address inside its
        // network, which tenants have no business learning.
        metrics.remoteAddress = primaryIP
        metrics.remotePort = primaryPort > 0 ? primaryPort : nil
        return metrics
    }
}
