import FerryCore
import Testing

@Suite("Response heads from curl's header lines")
struct ResponseHeadTests {
    private func feed(_ lines: [String]) -> [ResponseHeadAccumulator.LineResult] {
        var accumulator = ResponseHeadAccumulator()
        return lines.map { accumulator.consume(Array($0.utf8)) }
    }

    @Test("interim and final heads, CRLF stripped, folded lines joined")
    func heads() {
        let results = feed([
            "HTTP/1.1 100 Continue\r\n", "\r\n",
            "HTTP/1.1 200 OK\r\n", "Content-Type: text/html; charset=utf-8\r\n", "X-Long: one\r\n", "  two\r\n",
            "Set-Cookie: a=1\r\n", "Set-Cookie: b=2\r\n", "\r\n",
        ])
        guard case .headComplete(let interim) = results[1], case .headComplete(let final) = results[8] else {
            Issue.record("expected two heads, got \(results)")
            return
        }
        #expect(interim.isInterim)
        #expect(final.statusCode == 200)
        #expect(final.value(of: "content-type") == "text/html; charset=utf-8")
        #expect(final.value(of: "X-Long") == "one two")
        #expect(final.values(of: "set-cookie") == ["a=1", "b=2"])

        let response = HTTPResponseSnapshot(url: "https://example.com/docs/page.html?x=1", head: final)
        #expect(response.mimeType == "text/html")
        #expect(response.textEncodingName == "utf-8")
        #expect(response.expectedContentLength == -1)
        #expect(response.suggestedFilename == "page.html")
        #expect(response.allHeaderFields["Set-Cookie"] == "a=1, b=2")
    }

    @Test("garbage is reported, not trusted")
    func malformed() {
        #expect(feed(["not a status line\r\n"]) == [.malformed])
        #expect(feed(["HTTP/1.1 abc OK\r\n"]) == [.malformed])
        #expect(feed(["HTTP/1.1 200 OK\r\n", "no colon here\r\n"]) == [.more, .malformed])
        var accumulator = ResponseHeadAccumulator()
        _ = accumulator.consume(Array("HTTP/1.1 200 OK\r\n".utf8))
        let huge = Array("X: \(String(repeating: "a", count: 300 * 1024))\r\n".utf8)
        #expect(accumulator.consume(huge) == .tooLarge)
    }

    @Test("suggested filenames come from Content-Disposition, safely", arguments: [
        ("attachment; filename=\"report.pdf\"", "https://x/download", "report.pdf"),
        ("attachment; filename*=UTF-8''na%C3%AFve.txt", "https://x/d", "naïve.txt"),
        ("attachment; filename=\"../../etc/passwd\"", "https://x/d", "passwd"),
        ("inline", "https://x/files/archive.tar.gz", "archive.tar.gz"),
        ("", "https://x/", "Unknown"),
    ])
    func suggestedFilename(disposition: String, url: String, expected: String) {
        let head = ResponseHead(statusCode: 200, fields: disposition.isEmpty ? [] : [("Content-Disposition", disposition)])
        #expect(HTTPResponseSnapshot(url: url, head: head).suggestedFilename == expected)
    }
}

extension ResponseHeadAccumulator.LineResult: CustomTestStringConvertible {
    public var testDescription: String { "\(self)" }
}
