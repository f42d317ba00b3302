import Foundation

/// Encodes a model straight into a `JSONValue`, as `JSONCoding.makeEncoder()` would write it
/// and `JSONDecoder` read it back (dates as RFC 3339 strings, URLs as their strings, `Data` as
/// Base64), without the text in between. Every finished transfer turns its metrics, response
/// and request into event data: going through text cost a tenth of a small download's CPU.
enum JSONValueEncoder {
    static func encode(_ value: some Encodable) throws -> JSONValue {
        try box(value, codingPath: []).json
    }

    /// One value of the tree being built; containers fill it in place.
    fileprivate final class Node {
        var value: JSONValue?
        var object: [String: Node]?
        var array: [Node]?

        init(_ value: JSONValue? = nil) {
            self.value = value
        }

        var json: JSONValue {
            if let object { return .object(object.mapValues(\.json)) }
            if let array { return .array(array.map(\.json)) }
            // A type that encodes nothing is written as an empty object.
            return value ?? .object([:])
        }
    }

    fileprivate static func box(_ value: some Encodable, codingPath: [any CodingKey]) throws -> Node {
        switch value {
        case let json as JSONValue: return Node(json)
        case let date as Date: return Node(.string(ISO8601Parsing.string(from: date)))
        case let url as URL: return Node(.string(url.absoluteString))
        case let data as Data: return Node(.string(data.base64EncodedString()))
        default:
            let node = Node()
            try value.encode(to: NodeEncoder(node: node, codingPath: codingPath))
            return node
        }
    }

    fileprivate static func number(_ value: Double, codingPath: [any CodingKey]) throws -> JSONValue {
        guard value.isFinite else {
            throw EncodingError.invalidValue(value, EncodingError.Context(codingPath: codingPath, debugDescription: "\(value) is not valid JSON"))
        }
        return .number(value)
    }
}

private struct NodeEncoder: Encoder {
    let node: JSONValueEncoder.Node
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        if node.object == nil { node.object = [:] }
        return KeyedEncodingContainer(KeyedNodeContainer<Key>(node: node, codingPath: codingPath))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        if node.array == nil { node.array = [] }
        return UnkeyedNodeContainer(node: node, codingPath: codingPath)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        SingleNodeContainer(node: node, codingPath: codingPath)
    }
}

/// The key of an element of an unkeyed container, for coding paths in errors.
private struct IndexKey: CodingKey {
    var intValue: Int?
    var stringValue: String { "Index \(intValue ?? 0)" }
    init(intValue: Int) { self.intValue = intValue }
    init?(stringValue: String) { nil }
}

private struct KeyedNodeContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let node: JSONValueEncoder.Node
    let codingPath: [any CodingKey]

    private func set(_ value: JSONValue, _ key: Key) { node.object?[key.stringValue] = JSONValueEncoder.Node(value) }

    mutating func encodeNil(forKey key: Key) throws { set(.null, key) }
    mutating func encode(_ value: Bool, forKey key: Key) throws { set(.bool(value), key) }
    mutating func encode(_ value: String, forKey key: Key) throws { set(.string(value), key) }
    mutating func encode(_ value: Double, forKey key: Key) throws { set(try JSONValueEncoder.number(value, codingPath: codingPath + [key]), key) }
    mutating func encode(_ value: Float, forKey key: Key) throws { try encode(Double(value), forKey: key) }
    mutating func encode(_ value: Int, forKey key: Key) throws { set(.number(Double(value)), key) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { set(.number(Double(value)), key) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { set(.number(Double(value)), key) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { set(.number(Double(value)), key) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { set(.number(Double(value)), key) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { set(.number(Double(value)), key) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { set(.number(Double(value)), key) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { set(.number(Double(value)), key) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { set(.number(Double(value)), key) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { set(.number(Double(value)), key) }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        node.object?[key.stringValue] = try JSONValueEncoder.box(value, codingPath: codingPath + [key])
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        NodeEncoder(node: child(key), codingPath: codingPath + [key]).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        NodeEncoder(node: child(key), codingPath: codingPath + [key]).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder {
        NodeEncoder(node: child("super"), codingPath: codingPath)
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        NodeEncoder(node: child(key), codingPath: codingPath + [key])
    }

    private func child(_ key: Key) -> JSONValueEncoder.Node { child(key.stringValue) }

    private func child(_ name: String) -> JSONValueEncoder.Node {
        let child = JSONValueEncoder.Node()
        node.object?[name] = child
        return child
    }
}

private struct UnkeyedNodeContainer: UnkeyedEncodingContainer {
    let node: JSONValueEncoder.Node
    let codingPath: [any CodingKey]
    var count: Int { node.array?.count ?? 0 }

    private func append(_ value: JSONValue) { node.array?.append(JSONValueEncoder.Node(value)) }

    mutating func encodeNil() throws { append(.null) }
    mutating func encode(_ value: Bool) throws { append(.bool(value)) }
    mutating func encode(_ value: String) throws { append(.string(value)) }
    mutating func encode(_ value: Double) throws { append(try JSONValueEncoder.number(value, codingPath: codingPath + [IndexKey(intValue: count)])) }
    mutating func encode(_ value: Float) throws { try encode(Double(value)) }
    mutating func encode(_ value: Int) throws { append(.number(Double(value))) }
    mutating func encode(_ value: Int8) throws { append(.number(Double(value))) }
    mutating func encode(_ value: Int16) throws { append(.number(Double(value))) }
    mutating func encode(_ value: Int32) throws { append(.number(Double(value))) }
    mutating func encode(_ value: Int64) throws { append(.number(Double(value))) }
    mutating func encode(_ value: UInt) throws { append(.number(Double(value))) }
    mutating func encode(_ value: UInt8) throws { append(.number(Double(value))) }
    mutating func encode(_ value: UInt16) throws { append(.number(Double(value))) }
    mutating func encode(_ value: UInt32) throws { append(.number(Double(value))) }
    mutating func encode(_ value: UInt64) throws { append(.number(Double(value))) }

    mutating func encode<T: Encodable>(_ value: T) throws {
        let element = try JSONValueEncoder.box(value, codingPath: codingPath + [IndexKey(intValue: count)])
        node.array?.append(element)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        let path = codingPath + [IndexKey(intValue: count)]
        return NodeEncoder(node: appendChild(), codingPath: path).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let path = codingPath + [IndexKey(intValue: count)]
        return NodeEncoder(node: appendChild(), codingPath: path).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder {
        let path = codingPath + [IndexKey(intValue: count)]
        return NodeEncoder(node: appendChild(), codingPath: path)
    }

    private func appendChild() -> JSONValueEncoder.Node {
        let child = JSONValueEncoder.Node()
        node.array?.append(child)
        return child
    }
}

private struct SingleNodeContainer: SingleValueEncodingContainer {
    let node: JSONValueEncoder.Node
    let codingPath: [any CodingKey]

    mutating func encodeNil() throws { node.value = .null }
    mutating func encode(_ value: Bool) throws { node.value = .bool(value) }
    mutating func encode(_ value: String) throws { node.value = .string(value) }
    mutating func encode(_ value: Double) throws { node.value = try JSONValueEncoder.number(value, codingPath: codingPath) }
    mutating func encode(_ value: Float) throws { try encode(Double(value)) }
    mutating func encode(_ value: Int) throws { node.value = .number(Double(value)) }
    mutating func encode(_ value: Int8) throws { node.value = .number(Double(value)) }
    mutating func encode(_ value: Int16) throws { node.value = .number(Double(value)) }
    mutating func encode(_ value: Int32) throws { node.value = .number(Double(value)) }
    mutating func encode(_ value: Int64) throws { node.value = .number(Double(value)) }
    mutating func encode(_ value: UInt) throws { node.value = .number(Double(value)) }
    mutating func encode(_ value: UInt8) throws { node.value = .number(Double(value)) }
    mutating func encode(_ value: UInt16) throws { node.value = .number(Double(value)) }
    mutating func encode(_ value: UInt32) throws { node.value = .number(Double(value)) }
    mutating func encode(_ value: UInt64) throws { node.value = .number(Double(value)) }

    mutating func encode<T: Encodable>(_ value: T) throws {
        let boxed = try JSONValueEncoder.box(value, codingPath: codingPath)
        node.value = boxed.value
        node.object = boxed.object
        node.array = boxed.array
    }
}
