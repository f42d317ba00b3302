import FerryCore
import Foundation
import Testing

@Suite("Task creation validation")
struct TaskCreationTests {
    private func creation(_ body: String) throws -> TaskCreation {
        try TaskCreation(validating: try json(body), urlChecker: TestURLChecker())
    }

    private func field(_ body: String) -> String? {
        do {
            _ = try creation(body)
            return nil
        } catch let error as ValidationError {
            return error.field
        } catch {
            return "unexpected \(error)"
        }
    }

    @Test("a download task is suspended unless asked to resume, GET by default")
    func download() throws {
        let task = try creation(#"{"kind": "download", "request": {"url": "https://example.com/a.iso"}}"#)
        #expect(task.kind == .download)
        #expect(task.request?.httpMethod == "GET")
        #expect(!task.startsImmediately)
        #expect(task.priority == 0.5)
        let started = try creation(#"{"kind": "download", "request": {"url": "https://example.com/a.iso"}, "resume": true}"#)
        #expect(started.startsImmediately)
    }

    @Test("upload bodies: text and base64 are inline, POST by default")
    func uploads() throws {
        let text = try creation(#"{"kind": "upload", "request": {"url": "http://x/u"}, "body": {"text": "héllo"}}"#)
        #expect(text.uploadBody == .inline(Array("héllo".utf8)))
        #expect(text.request?.httpMethod == "POST")
        #expect(text.request?.httpBodyLength == 6)
        let base64 = try creation(#"{"kind": "upload", "request": {"url": "http://x/u", "httpMethod": "PUT"}, "body": {"base64": "AAEC"}}"#)
        #expect(base64.uploadBody == .inline([0, 1, 2]))
        #expect(base64.request?.httpMethod == "PUT")
    }

    @Test("request fields are all read")
    func requestFields() throws {
        let task = try creation("""
            {"kind": "data", "request": {"url": "http://x/q", "httpMethod": "POST", "allHTTPHeaderFields": {"Accept": "text/plain"},
             "timeoutInterval": 12, "cachePolicy": "returnCacheDataElseLoad", "httpBody": "aGk="},
             "priority": 0.75, "taskDescription": "nightly", "earliestBeginDate": "2030-01-02T03:04:05Z"}
            """)
        #expect(task.request?.allHTTPHeaderFields == ["Accept": "text/plain"])
        #expect(task.request?.timeoutInterval == 12)
        #expect(task.request?.cachePolicy == .returnCacheDataElseLoad)
        #expect(task.requestBody == Array("hi".utf8))
        #expect(task.request?.httpBodyLength == 2)
        #expect(task.priority == 0.75)
        #expect(task.taskDescription == "nightly")
        #expect(task.earliestBeginDate == Date(timeIntervalSince1970: 1_893_553_445))
    }

    @Test("bad values name their field", arguments: [
        (#"[]"#, ""),
        (#"{}"#, "kind"),
        (#"{"kind": "stream"}"#, "kind"),
        (#"{"kind": "data"}"#, "request"),
        (#"{"kind": "data", "request": {}}"#, "request.url"),
        (#"{"kind": "data", "request": {"url": "ftp://x/"}}"#, "request.url"),
        (#"{"kind": "data", "request": {"url": 5}}"#, "request.url"),
        (#"{"kind": "data", "request": {"url": "http://x/", "httpMethod": "GET X"}}"#, "request.httpMethod"),
        (#"{"kind": "data", "request": {"url": "http://x/", "httpMethod": "CONNECT"}}"#, "request.httpMethod"),
        (#"{"kind": "data", "request": {"url": "http://x/", "allHTTPHeaderFields": {"A": "b\nc"}}}"#, "request.allHTTPHeaderFields.A"),
        (#"{"kind": "data", "request": {"url": "http://x/", "allHTTPHeaderFields": {"Host": "evil"}}}"#, "request.allHTTPHeaderFields.Host"),
        (#"{"kind": "data", "request": {"url": "http://x/", "timeoutInterval": 0}}"#, "request.timeoutInterval"),
        (#"{"kind": "data", "request": {"url": "http://x/", "cachePolicy": "never"}}"#, "request.cachePolicy"),
        (#"{"kind": "data", "request": {"url": "http://x/", "httpBody": "%%%"}}"#, "request.httpBody"),
        (#"{"kind": "data", "request": {"url": "http://x/", "unknown": 1}}"#, "request.unknown"),
        (#"{"kind": "data", "request": {"url": "http://x/"}, "body": {"text": "x"}}"#, "body"),
        (#"{"kind": "upload", "request": {"url": "http://x/"}}"#, "body"),
        (#"{"kind": "upload", "request": {"url": "http://x/"}, "body": {}}"#, "body"),
        (#"{"kind": "upload", "request": {"url": "http://x/"}, "body": {"text": "a", "base64": "YQ=="}}"#, "body"),
        (#"{"kind": "upload", "request": {"url": "http://x/"}, "body": {"base64": "!"}}"#, "body.base64"),
        (#"{"kind": "upload", "request": {"url": "http://x/"}, "body": {"blob": "file.txt"}}"#, "body.blob"),
        (#"{"kind": "upload", "request": {"url": "http://x/"}, "body": {"stream": false}}"#, "body.stream"),
        (#"{"kind": "upload", "request": {"url": "http://x/", "httpBody": "YQ=="}, "body": {"text": "a"}}"#, "request.httpBody"),
        (#"{"kind": "data", "request": {"url": "http://x/"}, "priority": 2}"#, "priority"),
        (#"{"kind": "data", "request": {"url": "http://x/"}, "priority": "high"}"#, "priority"),
        (#"{"kind": "data", "request": {"url": "http://x/"}, "earliestBeginDate": "tomorrow"}"#, "earliestBeginDate"),
        (#"{"kind": "data", "request": {"url": "http://x/"}, "resume": 1}"#, "resume"),
        (#"{"kind": "data", "request": {"url": "http://x/"}, "resumeData": "abc"}"#, "resumeData"),
        (#"{"kind": "download", "request": {"url": "http://x/"}, "resumeData": "abc"}"#, "request"),
        (#"{"kind": "data", "request": {"url": "http://x/"}, "delegate": {"url": "http://hook/", "events": ["task.nope"]}}"#, "delegate.events[0]"),
        (#"{"kind": "data", "request": {"url": "http://x/"}, "delegate": {"url": "http://hook/", "secret": "plain"}}"#, "delegate.secret"),
        (#"{"kind": "data", "request": {"url": "http://x/"}, "surprise": true}"#, "surprise"),
    ])
    func rejected(body: String, field: String) {
        #expect(self.field(body) == field)
    }
}
