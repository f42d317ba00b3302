import FerryCore
import FerryStore
import Foundation

/// `dataTask.didReceiveData`, which a delegate opts in to: the body's bytes, base64, in order.
enum DataEvents {
    static func payload(_ bytes: some Collection<UInt8>, offset: Int64) -> [String: JSONValue] {
        [
            "data": .string(Data(bytes).base64EncodedString()),
            "offset": .number(Double(offset)),
            "length": .number(Double(bytes.count)),
        ]
    }

    /// The events for the part of a finished body that heartbeats did not carry yet.
    static func remainder(of ended: EndedTransfer) -> [OwnerEvent] {
        guard ended.job.receivesData, let body = ended.responseBody, body.count > ended.dataReported else { return [] }
        return events(carrying: body, from: ended.dataReported, lease: ended.job.lease)
    }

    /// The events for `body` from `start` on, a chunk each.
    static func events(carrying body: [UInt8], from start: Int, lease: LeaseToken) -> [OwnerEvent] {
        stride(from: start, to: body.count, by: Transfer.maximumDataPerEvent).map { start in
            let end = min(body.count, start + Transfer.maximumDataPerEvent)
            return OwnerEvent(lease: lease, type: .dataTaskDidReceiveData, data: payload(body[start..<end], offset: Int64(start)))
        }
    }
}
