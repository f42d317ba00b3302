import FerryCore
import Foundation

/// A view written with `JSONWriter` rather than encoded: the lists whose pages are large enough
/// that `JSONEncoder` was most of their cost.
protocol JSONWritable {
    /// About how many bytes one takes, to size a page's buffer.
    static var typicalSize: Int { get }
    func write(to json: inout JSONWriter)
}

/// Writes a JSON document as `JSONResponse`'s encoder would: compact, nulls included, strings
/// escaped by `JSONValue`, dates as `ISO8601Parsing` gives them. For the lists whose pages are
/// large enough that `JSONEncoder` was most of their cost (`EventView`, `WebhookDeliveryView`).
///
/// An object's members are given in code point order, the order of `.sortedKeys`; debug builds
/// check it.
struct JSONWriter {
    private(set) var bytes: [UInt8] = []
    /// Whether the next value or member of the current object or array needs a comma first.
    private var needsComma = false
    #if DEBUG
    private var lastKey: String?
    #endif

    init(reservingCapacity capacity: Int = 256) {
        bytes.reserveCapacity(capacity)
    }

    /// One view alone.
    static func document<View: JSONWritable>(_ view: View) -> [UInt8] {
        var json = JSONWriter(reservingCapacity: View.typicalSize)
        view.write(to: &json)
        return json.bytes
    }

    /// `{data: [...], nextCursor}`, as `ListView` is encoded.
    static func list<View: JSONWritable>(_ views: [View], nextCursor: String?) -> [UInt8] {
        var json = JSONWriter(reservingCapacity: views.count * View.typicalSize + 64)
        json.object { json in
            json.array("data") { json in
                for view in views { view.write(to: &json) }
            }
            json.string("nextCursor", nextCursor)
        }
        return json.bytes
    }

    mutating func object(_ body: (inout JSONWriter) -> Void) {
        nested(open: "{", close: "}", body)
    }

    mutating func array(_ body: (inout JSONWriter) -> Void) {
        nested(open: "[", close: "]", body)
    }

    mutating func string(_ key: String, _ value: String?) {
        self.key(key)
        quoted(value)
    }

    mutating func integer(_ key: String, _ value: (some BinaryInteger)?) {
        self.key(key)
        literal(value.map { String($0) } ?? "null")
    }

    mutating func bool(_ key: String, _ value: Bool) {
        self.key(key)
        literal(value ? "true" : "false")
    }

    mutating func date(_ key: String, _ value: Date?) {
        string(key, value.map(ISO8601Parsing.string(from:)))
    }

    /// A member whose value is JSON already (a stored document), copied as it is.
    mutating func raw(_ key: String, _ json: String) {
        self.key(key)
        literal(json)
    }

    mutating func object(_ key: String, _ body: (inout JSONWriter) -> Void) {
        self.key(key)
        object(body)
    }

    mutating func array(_ key: String, _ body: (inout JSONWriter) -> Void) {
        self.key(key)
        array(body)
    }

    private mutating func key(_ key: String) {
        #if DEBUG
        if let lastKey { assert(lastKey.utf8.lexicographicallyPrecedes(key.utf8), "\(key) after \(lastKey): members go in code point order") }
        lastKey = key
        #endif
        separate()
        JSONValue.write(string: key, into: &bytes)
        bytes.append(UInt8(ascii: ":"))
        needsComma = false
    }

    private mutating func quoted(_ string: String?) {
        separate()
        if let string { JSONValue.write(string: string, into: &bytes) } else { bytes += "null".utf8 }
        needsComma = true
    }

    private mutating func literal(_ text: String) {
        separate()
        bytes += text.utf8
        needsComma = true
    }

    private mutating func nested(open: Unicode.Scalar, close: Unicode.Scalar, _ body: (inout JSONWriter) -> Void) {
        separate()
        bytes.append(UInt8(ascii: open))
        needsComma = false
        #if DEBUG
        let outerKey = lastKey
        lastKey = nil
        #endif
        body(&self)
        #if DEBUG
        lastKey = outerKey
        #endif
        bytes.append(UInt8(ascii: close))
        needsComma = true
    }

    private mutating func separate() {
        if needsComma { bytes.append(UInt8(ascii: ",")) }
    }
}
