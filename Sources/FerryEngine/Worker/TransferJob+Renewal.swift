import FerryCore
import FerryStore
import Foundation

extension TransferJob {
    /// The session's `flush` or `reset` reached this job: its exchanges from now on open new
    /// connections, and after a reset carry none of the cookies and stored credentials it was
    /// claimed with. A claim read after the renewal already has its generation: unchanged.
    /// Returns whether anything changed.
    mutating func apply(_ renewal: SessionRenewal) -> Bool {
        guard renewal.sessionID == claim.sessionID, renewal.generation > claim.connectionGeneration else { return false }
        claim.connectionGeneration = renewal.generation
        claim.connectionsRenewedAt = renewal.renewedAt
        if renewal.resetsStorage {
            claim.cookies = CookieJar()
            claim.credentials = []
        }
        return true
    }
}

extension Transfer {
    /// A renewal that reaches a running transfer takes effect at its next exchange (a redirect,
    /// an authentication round); the exchange under way finishes as it began.
    func apply(_ renewal: SessionRenewal) {
        guard job.apply(renewal) else { return }
        if renewal.resetsStorage {
            cookies = CookieJar()
            challengeResponse = nil
        }
    }

    /// After the session's `flush` or `reset`, no connection opened before it is reused: a new
    /// one for the first two seconds, then any opened since. curl counts a connection's lifetime
    /// in whole seconds (and 0 means no limit), hence the margin of one second.
    func configureConnectionReuse() throws {
        guard let renewedAt = job.claim.connectionsRenewedAt else { return }
        let elapsed = Date().timeIntervalSince(renewedAt)
        if elapsed < 2 {
            try easy.set(.freshConnect, true)
        } else {
            try easy.set(.maxLifetimeConnection, Int(elapsed) - 1)
        }
    }
}
