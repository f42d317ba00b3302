import HTTPTypes
import Postgres
import Testing

@testable import FerryAPI

/// What a request is answered when PostgreSQL goes out of reach under it: 503 with Retry-After
/// only when sending it again is safe.
@Suite("A request that loses the database is told to retry only when retrying is safe")
struct DatabaseLossAnswerTests {
    static let refused = PostgresError(kind: .connection, message: "connection refused")
    static let lostMidStatement = PostgresError(kind: .connection, message: "server closed the connection", query: "SELECT 1")
    static let failedStatement = PostgresError(kind: .query, message: "division by zero", sqlState: "22012", query: "SELECT 1 / 0")

    @Test("a read is answered 503 whenever the connection was lost, also mid-statement")
    func reads() {
        for method in [HTTPRequest.Method.get, .head] {
            for error in [Self.refused, Self.lostMidStatement] {
                let problem = ProblemMiddleware.databaseProblem(for: error, method: method, reachedServer: true)
                #expect(problem?.status == .serviceUnavailable, "\(method) \(error)")
                #expect(problem?.headers[.retryAfter] == "5")
            }
            #expect(ProblemMiddleware.databaseProblem(for: Self.failedStatement, method: method, reachedServer: true) == nil)
        }
    }

    @Test("a write is answered 503 only if none of its calls reached the database")
    func writes() {
        for method in [HTTPRequest.Method.post, .put, .patch, .delete] {
            #expect(ProblemMiddleware.databaseProblem(for: Self.refused, method: method, reachedServer: false)?.status == .serviceUnavailable)
            #expect(ProblemMiddleware.databaseProblem(for: Self.refused, method: method, reachedServer: true) == nil)
            #expect(ProblemMiddleware.databaseProblem(for: Self.lostMidStatement, method: method, reachedServer: false) == nil)
        }
    }
}
