import Foundation

/// Conversions between `Date` and PostgreSQL timestamps, at PostgreSQL's microsecond precision.
///
/// Dates are sent in the binary timestamptz format (microseconds since 2000-01-01 UTC) so no
/// formatter runs per parameter; they come back as text, which the connection pins to ISO style
/// in UTC (`DateStyle=ISO`, `TimeZone=UTC`), e.g. `2024-03-05 07:08:09.123456+00`.
enum PostgresTimestamp {
    /// Seconds from PostgreSQL's epoch (2000-01-01) to Foundation's (2001-01-01): 366 days.
    static let postgresEpochToReferenceDate: Int64 = 366 * 86_400

    static func microsecondsSincePostgresEpoch(_ date: Date) -> Int64 {
        let micros = (date.timeIntervalSinceReferenceDate * 1_000_000).rounded()
        return Int64(micros) + postgresEpochToReferenceDate * 1_000_000
    }

    static func date(microsecondsSince1970 micros: Int64) -> Date {
        let sinceReference = micros - (postgresEpochToReferenceDate + 946_684_800) * 1_000_000
        return Date(timeIntervalSinceReferenceDate: Double(sinceReference) / 1_000_000)
    }

    /// Parses `YYYY-MM-DD[ HH:MM:SS[.ffffff]][+HH[:MM[:SS]]][ BC]`; no offset means UTC.
    static func parse(_ text: String) throws -> Date {
        var scanner = DigitScanner(text.utf8)
        guard let year = scanner.number(), scanner.skip("-"),
              let month = scanner.number(), scanner.skip("-"),
              let day = scanner.number(), (1...12).contains(month), (1...31).contains(day)
        else { throw invalid(text) }
        var seconds: Int64 = 0
        var micros: Int64 = 0
        if scanner.skip(" ") || scanner.skip("T") {
            guard let hour = scanner.number(), scanner.skip(":"),
                  let minute = scanner.number(), scanner.skip(":"),
                  let second = scanner.number()
            else { throw invalid(text) }
            seconds = hour * 3600 + minute * 60 + second
            if scanner.skip(".") {
                let start = scanner.position
                guard var fraction = scanner.number() else { throw invalid(text) }
                var digits = scanner.position - start
                while digits < 6 { fraction *= 10; digits += 1 }
                while digits > 6 { fraction /= 10; digits -= 1 }
                micros = fraction
            }
        }
        if let sign = scanner.sign() {
            guard let hours = scanner.number() else { throw invalid(text) }
            var offset = hours * 3600
            if scanner.skip(":"), let minutes = scanner.number() { offset += minutes * 60 }
            if scanner.skip(":"), let secs = scanner.number() { offset += secs }
            seconds -= sign * offset
        }
        var astronomicalYear = year
        if scanner.skip(" ") {
            guard scanner.skip("B"), scanner.skip("C") else { throw invalid(text) }
            astronomicalYear = 1 - year
        }
        guard scanner.isAtEnd else { throw invalid(text) }
        let days = daysSince1970(year: astronomicalYear, month: month, day: day)
        return date(microsecondsSince1970: (days * 86_400 + seconds) * 1_000_000 + micros)
    }

    /// Days from 1970-01-01 in the proleptic Gregorian calendar (Howard Hinnant's algorithm).
    static func daysSince1970(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let monthIndex = month > 2 ? month - 3 : month + 9
        let dayOfYear = (153 * monthIndex + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    private static func invalid(_ text: String) -> PostgresError {
        .decoding("not a PostgreSQL timestamp in ISO style", detail: text)
    }
}

/// A cursor over ASCII digits and punctuation, for the fixed formats PostgreSQL prints.
struct DigitScanner {
    private let bytes: [UInt8]
    private(set) var position = 0

    init(_ utf8: String.UTF8View) {
        bytes = Array(utf8)
    }

    var isAtEnd: Bool { position == bytes.count }

    /// A run of decimal digits (at most 18, so it cannot overflow).
    mutating func number() -> Int64? {
        let start = position
        var value: Int64 = 0
        while position < bytes.count, position - start < 18, (48...57).contains(bytes[position]) {
            value = value * 10 + Int64(bytes[position] - 48)
            position += 1
        }
        return position > start ? value : nil
    }

    mutating func skip(_ character: Unicode.Scalar) -> Bool {
        guard position < bytes.count, bytes[position] == UInt8(character.value) else { return false }
        position += 1
        return true
    }

    /// `+` → 1, `-` → -1, anything else → nil (nothing consumed).
    mutating func sign() -> Int64? {
        if skip("+") { return 1 }
        if skip("-") { return -1 }
        return nil
    }
}
