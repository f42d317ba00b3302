import Foundation

/// HTTP-date (RFC 9110 §5.6.7) without `DateFormatter`, whose locale and thread-safety
/// surprises do not belong in a test fixture. Whole seconds only, as on the wire.
enum HTTPDate {
    private static let weekdays = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// IMF-fixdate, e.g. `Sun, 06 Nov 1994 08:49:37 GMT`.
    static func format(_ date: Date) -> String {
        let seconds = Int(date.timeIntervalSince1970.rounded(.down))
        let days = Int((Double(seconds) / 86_400).rounded(.down))
        let secondOfDay = seconds - days * 86_400
        let (year, month, day) = civil(fromDays: days)
        let weekday = ((days % 7) + 11) % 7  // 1970-01-01 was a Thursday
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(weekdays[weekday]), \(two(day)) \(months[month - 1]) \(year) "
            + "\(two(secondOfDay / 3600)):\(two(secondOfDay / 60 % 60)):\(two(secondOfDay % 60)) GMT"
    }

    /// Accepts IMF-fixdate, RFC 850 and asctime forms; nil for anything else, which RFC 9110
    /// says makes the conditional header be ignored.
    static func parse(_ text: String) -> Date? {
        let tokens = text.split(whereSeparator: { $0 == " " || $0 == "," || $0 == "-" }).map(String.init)
        let day: Int?, monthName: String, yearText: String, time: String
        if tokens.count == 6, tokens[5] == "GMT" {  // IMF-fixdate or RFC 850
            (day, monthName, yearText, time) = (Int(tokens[1]), tokens[2], tokens[3], tokens[4])
        } else if tokens.count == 5 {  // asctime: Sun Nov  6 08:49:37 1994
            (day, monthName, yearText, time) = (Int(tokens[2]), tokens[1], tokens[4], tokens[3])
        } else {
            return nil
        }
        let clock = time.split(separator: ":").compactMap { Int($0) }
        guard let day, var year = Int(yearText), let month = months.firstIndex(of: monthName),
              clock.count == 3, (1...31).contains(day), (0..<24).contains(clock[0]),
              (0..<60).contains(clock[1]), (0...60).contains(clock[2]) else { return nil }
        if yearText.count == 2 { year += year < 70 ? 2000 : 1900 }
        let days = days(fromCivil: year, month + 1, day)
        return Date(timeIntervalSince1970: Double(days * 86_400 + clock[0] * 3600 + clock[1] * 60 + clock[2]))
    }

    /// Howard Hinnant's days-from-civil for the proleptic Gregorian calendar.
    private static func days(fromCivil year: Int, _ month: Int, _ day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    private static func civil(fromDays days: Int) -> (year: Int, month: Int, day: Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}
