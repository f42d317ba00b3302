/// The base62 alphabet (`0-9A-Za-z`) used by API keys, operator tokens and resource ids.
///
/// Base62 survives every place an identifier travels — URLs, headers, shell arguments,
/// double-click selection — without escaping, which base64's `+`, `/` and `=` do not.
enum Base62 {
    /// The 62 symbols, in value order.
    static let alphabet: [UInt8] = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz".utf8)

    /// A string of `length` symbols, each drawn uniformly (no modulo bias:
    /// `next(upperBound:)` rejects out-of-range draws).
    static func randomString(length: Int, using generator: inout some RandomNumberGenerator) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(length)
        for _ in 0..<length {
            bytes.append(alphabet[Int(generator.next(upperBound: UInt64(alphabet.count)))])
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// `value` written in base62, most significant symbol first, left-padded with `0` to `width`.
    /// `width` must be large enough for the value (6 symbols hold any `UInt32`: 62⁶ > 2³²).
    static func encode(_ value: UInt32, width: Int) -> String {
        var digits = [UInt8](repeating: alphabet[0], count: width)
        var remaining = UInt64(value)
        var index = width - 1
        while remaining > 0, index >= 0 {
            digits[index] = alphabet[Int(remaining % 62)]
            remaining /= 62
            index -= 1
        }
        return String(decoding: digits, as: UTF8.self)
    }

    /// Whether `byte` is one of the 62 symbols.
    static func contains(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "A")...UInt8(ascii: "Z"),
             UInt8(ascii: "a")...UInt8(ascii: "z"):
            return true
        default:
            return false
        }
    }
}
