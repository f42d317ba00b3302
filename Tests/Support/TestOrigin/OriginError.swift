import Glibc

/// Why the test origin could not do what it was asked.
///
/// Tests see these when `TestOrigin.init` fails or when a handler's write hits a client that
/// went away; the connection thread catches them, so they never escape into the test process.
public enum OriginError: Error, CustomStringConvertible, Equatable {
    /// A POSIX call failed; `code` is its `errno`.
    case system(call: String, code: Int32)
    /// The connection was closed (by the peer, by `close()`/`reset()`, or by `stop()`).
    case connectionClosed
    /// The client sent something that is not an HTTP/1.1 request.
    case malformedRequest(String)
    /// The request head exceeded the size the origin is willing to buffer.
    case requestHeadTooLarge
    /// A handler tried to send a second response head for the same request.
    case responseAlreadyStarted

    public var description: String {
        switch self {
        case .system(let call, let code):
            return "\(call) failed: \(String(cString: strerror(code))) (errno \(code))"
        case .connectionClosed:
            return "connection closed"
        case .malformedRequest(let reason):
            return "malformed request: \(reason)"
        case .requestHeadTooLarge:
            return "request head too large"
        case .responseAlreadyStarted:
            return "response head already sent"
        }
    }
}
