/// The per-connection loop: read a request, run the handler, decide whether to keep the
/// connection for the next request.
extension OriginConnection {
    func serve() {
        defer { close() }
        while !isClosed && !core.isStopping {
            let request: OriginRequest
            do {
                guard let next = try readRequest() else { return }
                request = next
            } catch OriginError.requestHeadTooLarge {
                sendPlainError(status: 431, message: "request head too large")
                return
            } catch OriginError.malformedRequest(let reason) {
                sendPlainError(status: 400, message: reason)
                return
            } catch {
                return
            }
            core.record(request)
            let responder = OriginResponder(request: request, connection: self)
            do {
                try core.handler(request, responder)
            } catch {
                if !isClosed && !responder.isHeadSent {
                    sendPlainError(status: 500, message: "handler failed: \(error)")
                }
                return
            }
            if isClosed { return }
            guard responder.isHeadSent else {
                sendPlainError(status: 500, message: "handler sent no response")
                return
            }
            guard responder.keepsConnectionAlive else { return }
        }
    }

    /// A response for when there is no usable request or handler result; always closes.
    private func sendPlainError(status: Int, message: String) {
        let body = Array((message + "\n").utf8)
        let head = "HTTP/1.1 \(status) \(OriginResponder.reasonPhrase(status))\r\n"
            + "Content-Type: text/plain\r\nContent-Length: \(body.count)\r\nConnection: close\r\n\r\n"
        try? send((Array(head.utf8) + body)[...])
    }
}
