/// Just enough DER (X.690) to read the parameters of an encrypted private key: one element at
/// a time, definite lengths only, lengths bounded by the input so nothing can overrun.
struct DERReader {
    struct Element {
        var tag: UInt8
        var content: ArraySlice<UInt8>
    }

    enum Failure: Error { case malformed }

    static let sequence: UInt8 = 0x30
    static let integer: UInt8 = 0x02
    static let octetString: UInt8 = 0x04
    static let objectIdentifier: UInt8 = 0x06

    private var rest: ArraySlice<UInt8>

    init(_ bytes: ArraySlice<UInt8>) { rest = bytes }

    var isAtEnd: Bool { rest.isEmpty }

    /// The next element, whatever its tag.
    mutating func next() throws(Failure) -> Element {
        guard rest.count >= 2 else { throw .malformed }
        let tag = rest[rest.startIndex]
        guard tag & 0x1F != 0x1F else { throw .malformed }  // multi-byte tags: never in these structures
        var index = rest.startIndex + 1
        let first = rest[index]
        index += 1
        var length = 0
        if first < 0x80 {
            length = Int(first)
        } else {
            let count = Int(first & 0x7F)
            // At most 4 length bytes (an indefinite length, 0x80, is not DER).
            guard (1...4).contains(count), rest.endIndex - index >= count else { throw .malformed }
            for byte in rest[index..<(index + count)] { length = length << 8 | Int(byte) }
            index += count
        }
        guard length <= rest.endIndex - index else { throw .malformed }
        let content = rest[index..<(index + length)]
        rest = rest[(index + length)...]
        return Element(tag: tag, content: content)
    }

    /// The next element, which must carry `tag`.
    mutating func next(_ tag: UInt8) throws(Failure) -> ArraySlice<UInt8> {
        let element = try next()
        guard element.tag == tag else { throw .malformed }
        return element.content
    }

    /// A non-negative INTEGER; one too large for Int64 reads as `Int64.max` (a cost that big is
    /// refused anyway, and must not trap).
    mutating func nonNegativeInteger() throws(Failure) -> Int64 {
        let content = try next(Self.integer)
        guard let first = content.first, first & 0x80 == 0 else { throw .malformed }
        let significant = content.drop { $0 == 0 }
        guard significant.count <= 8 else { return .max }
        var value: UInt64 = 0
        for byte in significant { value = value << 8 | UInt64(byte) }
        return value > UInt64(Int64.max) ? .max : Int64(value)
    }
}
