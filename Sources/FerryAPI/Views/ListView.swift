import FerryStore

/// `{data: [...], nextCursor}`: every list of the API (the event and delivery lists write the
/// same shape with `JSONWriter.list`).
struct ListView<Item: Encodable & Sendable>: Encodable, Sendable {
    var data: [Item]
    var nextCursor: String?

    init<Record>(_ page: Page<Record>, _ transform: (Record) -> Item) {
        data = page.items.map(transform)
        nextCursor = page.nextCursor
    }

    enum CodingKeys: String, CodingKey {
        case data, nextCursor
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(data, forKey: .data)
        try container.encode(nextCursor, forKey: .nextCursor)
    }
}
