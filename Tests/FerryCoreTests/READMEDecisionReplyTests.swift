import Foundation
import Testing

@testable import FerryCore

/// The README's table of delegate events tells receivers how to reply to decision events; a
/// receiver that follows it must be understood.
@Suite("The README's decision replies are the ones Ferry reads")
struct READMEDecisionReplyTests {
    /// The "Decision reply" cell of the README's row for `type`.
    static func replyCell(of type: EventType) throws -> String {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        let row = try #require(readme.split(separator: "\n").first { $0.hasPrefix("| `\(type.rawValue)` |") }, "the README has a row for \(type.rawValue)")
        // Cells are split on "|" but not on the escaped "\|" inside them; the reply cell is the last.
        let cells = row.replacingOccurrences(of: "\\|", with: "\u{1}").split(separator: "|")
        let cell = try #require(cells.last, "the row has a reply cell")
        return cell.replacingOccurrences(of: "\u{1}", with: "|").trimmingCharacters(in: .whitespaces)
    }

    /// The quoted words of a cell that are among `names`.
    static func documented(_ cell: String, among names: Set<String>) -> Set<String> {
        Set(cell.split(separator: "\"").map(String.init).filter(names.contains))
    }

    static let proposed = TransferRequest(url: "http://a/next")

    @Test("task.willBeginDelayedRequest: continueLoading, cancel, and useNewRequest with a request")
    func delayedRequest() throws {
        let cell = try Self.replyCell(of: .taskWillBeginDelayedRequest)
        let names: Set = ["continueLoading", "useNewRequest", "cancel"]
        #expect(Self.documented(cell, among: names) == names, "\(cell)")
        for name in names {
            let reply = try json(#"{"disposition": "\#(name)", "request": {"url": "http://c/"}}"#)
            #expect(DecisionReplies.delayedRequest(reply, original: Self.proposed, urlChecker: TestURLChecker()) != nil, "\(name)")
        }
        // Every reply shape the cell shows that carries a request names its disposition: the code
        // reads a new request only with useNewRequest.
        let shapes = cell.split(separator: "`").enumerated().filter { $0.offset % 2 == 1 }.map(\.element)
        #expect(!shapes.isEmpty)
        for shape in shapes where shape.contains("\"request\"") {
            #expect(shape.contains("\"disposition\": \"useNewRequest\""), "\(shape)")
        }
    }

    @Test("dataTask.didReceiveResponse: allow, cancel, becomeDownload; becomeStream is not offered")
    func response() throws {
        let cell = try Self.replyCell(of: .dataTaskDidReceiveResponse)
        let names: Set = ["allow", "cancel", "becomeDownload", "becomeStream"]
        #expect(Self.documented(cell, among: names) == ["allow", "cancel", "becomeDownload"], "\(cell)")
        for name in ["allow", "cancel", "becomeDownload"] {
            #expect(DecisionReplies.response(try json(#"{"disposition": "\#(name)"}"#)) != nil)
        }
    }
}
