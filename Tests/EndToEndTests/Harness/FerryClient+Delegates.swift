import Foundation

extension FerryClient {
    /// `POST /v1/sessions` with a delegate (`{url, events, maximumInFlight, …}`).
    func createSession(_ configuration: [String: Any], delegate: [String: Any]) async throws -> SessionAnswer {
        try await send("POST", "/v1/sessions", json: Self.json(["configuration": configuration, "delegate": delegate]))
            .decode(SessionAnswer.self, expecting: [201], "creating a session with a delegate")
    }
}
