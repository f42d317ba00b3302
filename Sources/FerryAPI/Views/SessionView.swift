import FerryCore
import Foundation

/// A session: its configuration with every default filled in, as URLSession reports it.
struct SessionView: Encodable, Sendable {
    var id: String
    var configuration: SessionConfiguration
    var sessionDescription: String?
    var state: String
    var createdAt: Date
    var invalidatedAt: Date?

    init(_ session: SessionRecord) {
        id = session.id
        configuration = session.configuration.redactingSecrets
        sessionDescription = session.sessionDescription
        state = session.state.rawValue
        createdAt = session.createdAt
        invalidatedAt = session.invalidatedAt
    }

    enum CodingKeys: String, CodingKey {
        case id, configuration, sessionDescription, state, createdAt, invalidatedAt
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(configuration, forKey: .configuration)
        try container.encode(sessionDescription, forKey: .sessionDescription)
        try container.encode(state, forKey: .state)
        try container.encode(createdAt, forKey: .createdAt)
        try container.encode(invalidatedAt, forKey: .invalidatedAt)
    }
}
