import FerryCore
import Testing

@Suite("Redirects as URLSession follows them")
struct RedirectPolicyTests {
    let post = TransferRequest(
        url: "https://a.example/form", httpMethod: "POST",
        allHTTPHeaderFields: ["Content-Type": "application/json", "Authorization": "Bearer t", "Accept": "*/*"],
        httpBodyLength: 10
    )

    @Test("301, 302 and 303 turn POST into GET without a body; 307 and 308 keep both", arguments: [
        (301, "GET", false), (302, "GET", false), (303, "GET", false), (307, "POST", true), (308, "POST", true),
    ])
    func methods(status: Int, method: String, keepsBody: Bool) {
        let next = RedirectPolicy.nextRequest(after: post, statusCode: status, location: "https://a.example/next", originChanged: false)
        #expect(next.request.httpMethod == method)
        #expect(next.keepsBody == keepsBody)
        #expect(next.request.url == "https://a.example/next")
        #expect((next.request.allHTTPHeaderFields["Content-Type"] != nil) == keepsBody)
        #expect(next.request.allHTTPHeaderFields["Authorization"] == "Bearer t")
    }

    @Test("credentials never follow a redirect to another origin")
    func crossOrigin() {
        let next = RedirectPolicy.nextRequest(after: post, statusCode: 307, location: "https://b.example/", originChanged: true)
        #expect(next.request.allHTTPHeaderFields["Authorization"] == nil)
        #expect(next.request.allHTTPHeaderFields["Accept"] == "*/*")
    }

    @Test("303 after HEAD stays HEAD")
    func head() {
        let head = TransferRequest(url: "http://a/", httpMethod: "HEAD")
        #expect(RedirectPolicy.nextRequest(after: head, statusCode: 303, location: "http://a/b", originChanged: false).request.httpMethod == "HEAD")
    }
}

@Suite("Redirects keep methods other than POST")
struct RedirectMethodTests {
    @Test("a 301 or 302 after PUT stays PUT with its body", arguments: [301, 302])
    func put(status: Int) {
        let put = TransferRequest(url: "http://a/x", httpMethod: "PUT", httpBodyLength: 3)
        let next = RedirectPolicy.nextRequest(after: put, statusCode: status, location: "http://a/y", originChanged: false)
        #expect(next.request.httpMethod == "PUT")
        #expect(next.keepsBody)
    }
}
