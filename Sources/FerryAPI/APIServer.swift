import Hummingbird
import HummingbirdCore
import NIOCore

/// How the API speaks HTTP/1.1, the same in `ferry serve` and in the tests.
public enum APIServer {
    /// How long a connection may stay silent — no complete request head, no body bytes, no
    /// answer in progress — before Ferry closes it (`FERRY_IDLE_TIMEOUT`). Without it a client
    /// that trickles a request head byte by byte (slowloris), or opens connections and sends
    /// nothing, holds them for ever. Long-polls and event streams are answers in progress: the
    /// timeout does not cut them.
    public static let defaultIdleTimeout: Duration = .seconds(30)

    public static func http1(idleTimeout: Duration = defaultIdleTimeout) -> HTTPServerBuilder {
        .http1(configuration: .init(idleTimeout: TimeAmount(idleTimeout)))
    }
}
