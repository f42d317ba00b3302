/// One event type per URLSession delegate method (DESIGN §3). The raw value is the webhook `type`.
public enum EventType: String, Codable, Sendable, CaseIterable, Hashable {
    case sessionDidBecomeInvalidWithError = "session.didBecomeInvalidWithError"
    case sessionDidReceiveChallenge = "session.didReceiveChallenge"
    case sessionDidFinishEvents = "session.didFinishEvents"
    case taskDidCreateTask = "task.didCreateTask"
    case taskIsWaitingForConnectivity = "task.isWaitingForConnectivity"
    case taskWillBeginDelayedRequest = "task.willBeginDelayedRequest"
    case taskWillPerformHTTPRedirection = "task.willPerformHTTPRedirection"
    case taskDidReceiveChallenge = "task.didReceiveChallenge"
    case taskNeedNewBodyStream = "task.needNewBodyStream"
    case taskDidSendBodyData = "task.didSendBodyData"
    case taskDidFinishCollectingMetrics = "task.didFinishCollectingMetrics"
    case taskDidCompleteWithError = "task.didCompleteWithError"
    case dataTaskDidReceiveResponse = "dataTask.didReceiveResponse"
    case dataTaskDidBecomeDownloadTask = "dataTask.didBecomeDownloadTask"
    case dataTaskDidReceiveData = "dataTask.didReceiveData"
    case dataTaskWillCacheResponse = "dataTask.willCacheResponse"
    case downloadTaskDidWriteData = "downloadTask.didWriteData"
    case downloadTaskDidResumeAtOffset = "downloadTask.didResumeAtOffset"
    case downloadTaskDidFinishDownloadingTo = "downloadTask.didFinishDownloadingTo"

    /// Events that pause the transfer until the receiver answers (or the default applies).
    public var isDecision: Bool {
        switch self {
        case .taskWillPerformHTTPRedirection, .taskDidReceiveChallenge, .sessionDidReceiveChallenge,
             .dataTaskDidReceiveResponse, .dataTaskWillCacheResponse, .taskWillBeginDelayedRequest:
            true
        default:
            false
        }
    }

    /// Events about the session as a whole rather than one task.
    public var isSessionEvent: Bool {
        rawValue.hasPrefix("session.")
    }
}
