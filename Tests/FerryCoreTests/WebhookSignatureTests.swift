import Foundation
import Testing

@testable import FerryCore

@Suite("Standard Webhooks signatures")
struct WebhookSignatureTests {
    // The specification's published test vector (also in the Svix and standard-webhooks
    // libraries' own tests); recomputed independently with Python's hmac module.
    private let vectorSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
    private let vectorID = "msg_p5jXN8AQM9LWM0D4loKWxJek"
    private let vectorTimestamp = 1_614_265_330
    private let vectorBody = Array(#"{"test": 2432232314}"#.utf8)
    private let vectorSignature = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="

    @Test func reproducesThePublishedTestVector() throws {
        let secret = try WebhookSecret.parse(vectorSecret)
        #expect(secret.count == 24)
        let header = WebhookSignature.sign(id: vectorID, timestamp: vectorTimestamp, body: vectorBody, secrets: [secret])
        #expect(header == vectorSignature)
    }

    @Test func verifiesThePublishedTestVector() throws {
        let secret = try WebhookSecret.parse(vectorSecret)
        #expect(WebhookSignature.verify(header: vectorSignature, id: vectorID, timestamp: vectorTimestamp, body: vectorBody, secrets: [secret]))
        #expect(WebhookSignature.verify(header: "v1,bm9wZQ== " + vectorSignature, id: vectorID, timestamp: vectorTimestamp, body: vectorBody, secrets: [secret]))
    }

    @Test func rejectsAnyChangeToWhatWasSigned() throws {
        let secret = try WebhookSecret.parse(vectorSecret)
        func verify(id: String? = nil, timestamp: Int? = nil, body: [UInt8]? = nil, header: String? = nil) -> Bool {
            WebhookSignature.verify(
                header: header ?? vectorSignature, id: id ?? vectorID, timestamp: timestamp ?? vectorTimestamp,
                body: body ?? vectorBody, secrets: [secret]
            )
        }
        #expect(!verify(id: "msg_other"))
        #expect(!verify(timestamp: vectorTimestamp + 1))
        #expect(!verify(body: Array(#"{"test": 2432232315}"#.utf8)))
        #expect(!verify(header: "v2,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="))
        #expect(!verify(header: "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE"))
        #expect(!verify(header: ""))
        #expect(!WebhookSignature.verify(header: vectorSignature, id: vectorID, timestamp: vectorTimestamp, body: vectorBody, secrets: []))
    }

    @Test func rotationSignsWithEverySecret() throws {
        var generator = SplitMix64(seed: 9)
        let old = try WebhookSecret.parse(WebhookSecret.generate(using: &generator))
        let new = try WebhookSecret.parse(WebhookSecret.generate(using: &generator))
        let stranger = try WebhookSecret.parse(WebhookSecret.generate(using: &generator))
        let body = Array(#"{"type":"task.didCompleteWithError"}"#.utf8)

        let header = WebhookSignature.sign(id: "evt_1", timestamp: 1_700_000_000, body: body, secrets: [old, new])
        let entries = header.split(separator: " ")
        #expect(entries.count == 2)
        #expect(entries.allSatisfy { $0.hasPrefix("v1,") })
        #expect(String(entries[0]) == WebhookSignature.sign(id: "evt_1", timestamp: 1_700_000_000, body: body, secrets: [old]))
        #expect(String(entries[1]) == WebhookSignature.sign(id: "evt_1", timestamp: 1_700_000_000, body: body, secrets: [new]))

        #expect(WebhookSignature.verify(header: header, id: "evt_1", timestamp: 1_700_000_000, body: body, secrets: [old]))
        #expect(WebhookSignature.verify(header: header, id: "evt_1", timestamp: 1_700_000_000, body: body, secrets: [new]))
        #expect(!WebhookSignature.verify(header: header, id: "evt_1", timestamp: 1_700_000_000, body: body, secrets: [stranger]))
    }
}

@Suite("Webhook secrets")
struct WebhookSecretTests {
    private func secret(byteCount: Int) -> String {
        "whsec_" + Data(repeating: 0xAB, count: byteCount).base64EncodedString()
    }

    @Test func generatesThirtyTwoRandomBytes() throws {
        var generator = SplitMix64(seed: 11)
        let text = WebhookSecret.generate(using: &generator)
        #expect(text.hasPrefix("whsec_"))
        #expect(try WebhookSecret.parse(text).count == 32)
        #expect(WebhookSecret.generate(using: &generator) != text)
    }

    @Test func acceptsTwentyFourToSixtyFourBytes() throws {
        #expect(try WebhookSecret.parse(secret(byteCount: 24)).count == 24)
        #expect(try WebhookSecret.parse(secret(byteCount: 64)) == [UInt8](repeating: 0xAB, count: 64))
    }

    @Test func refusesOtherLengths() {
        #expect(throws: WebhookSecretError.wrongLength(byteCount: 23)) { try WebhookSecret.parse(secret(byteCount: 23)) }
        #expect(throws: WebhookSecretError.wrongLength(byteCount: 65)) { try WebhookSecret.parse(secret(byteCount: 65)) }
        #expect(throws: WebhookSecretError.wrongLength(byteCount: 0)) { try WebhookSecret.parse("whsec_") }
    }

    @Test func refusesWrongShapes() {
        #expect(throws: WebhookSecretError.missingPrefix) { try WebhookSecret.parse("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw") }
        #expect(throws: WebhookSecretError.notBase64) { try WebhookSecret.parse("whsec_!!!!not base64!!!!") }
        #expect(throws: WebhookSecretError.notBase64) { try WebhookSecret.parse("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaS") }
    }

    @Test func errorNeverRepeatsTheSecret() {
        let text = "whsec_" + Data(repeating: 0x11, count: 8).base64EncodedString()
        do {
            _ = try WebhookSecret.parse(text)
            Issue.record("an 8-byte secret was accepted")
        } catch {
            #expect(!error.description.contains(String(text.dropFirst(6))))
            #expect(error.description.contains("24 to 64 bytes"))
        }
    }
}
