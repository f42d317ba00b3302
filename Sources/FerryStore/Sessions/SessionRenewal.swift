import Foundation

/// A session's connections renewed by `flush` or `reset`, as its `sessionFlush` or
/// `sessionReset` notification tells the instances: from `generation` on, its transfers open
/// new connections; a reset also empties the cookies and credentials they carry.
public struct SessionRenewal: Sendable, Equatable {
    public var sessionID: String
    public var generation: Int64
    /// A reset (not only a flush).
    public var resetsStorage: Bool
    /// When this instance heard of it.
    public var renewedAt: Date

    public init(sessionID: String, generation: Int64, resetsStorage: Bool, renewedAt: Date = Date()) {
        self.sessionID = sessionID
        self.generation = generation
        self.resetsStorage = resetsStorage
        self.renewedAt = renewedAt
    }

    static func payload(sessionID: String, generation: Int64) -> String {
        "\(sessionID) \(generation)"
    }

    /// The renewal a notification payload says, nil for anything else.
    public init?(payload: String, resetsStorage: Bool) {
        let parts = payload.split(separator: " ")
        guard parts.count == 2, let generation = Int64(parts[1]) else { return nil }
        self.init(sessionID: String(parts[0]), generation: generation, resetsStorage: resetsStorage)
    }
}
