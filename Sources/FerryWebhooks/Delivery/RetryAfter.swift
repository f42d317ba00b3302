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
        guard text.count <= 64 else { return nil }
        // asctime pads the day with a space ("Nov  6"): compare with single spaces.
        let collapsed = text.split(separator: " ").joined(separator: " ")
        guard let date = httpDate(collapsed) else { return nil }
        let wait = date.timeIntervalSince(now)
        return .milliseconds(Int64(max(wait, 0) * 1000))
    }

    /// IMF-fixdate, the form servers send ("Sun, 06 Nov 1994 08:49:37 GMT"), and the obsolete
    /// RFC 850 and asctime forms that RFC 9110 asks recipients to accept.
    private static func httpDate(_ text: String) -> Date? {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        for format in ["EEE, dd MMM yyyy HH:mm:ss zzz", "EEEE, dd-MMM-yy HH:mm:ss zzz", "EEE MMM d HH:mm:ss yyyy"] {
            formatter.dateFormat = format
            if let date = formatter.date(from: text) { return date }
        }
        return nil
    }
}
