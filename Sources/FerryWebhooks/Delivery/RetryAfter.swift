import FerryCore
import Foundation

/// The `Retry-After` header (RFC 9110 §10.2.3): a number of seconds or an HTTP date.
enum RetryAfter {
    /// How long the receiver asks to wait, or nil when the value is neither form. A date in the
    /// past means no wait.
    static func parse(_ value: String, now: Date) -> Duration? {
        let text = value.trimmingCharacters(in: .whitespaces)
        if let seconds = Int64(text) {
            return seconds >= 0 ? .seconds(seconds) : nil
        }
        guard let date = HTTPDate.parse(text) else { return nil }
        let wait = date.timeIntervalSince(now)
        return .milliseconds(Int64(max(wait, 0) * 1000))
    }
}
