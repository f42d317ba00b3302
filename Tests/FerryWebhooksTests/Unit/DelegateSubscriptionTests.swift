import FerryCore
import FerryStore
import Testing

@testable import FerryWebhooks

@Suite("Delegate subscriptions")
struct DelegateSubscriptionTests {
    @Test func withoutAFilterEverythingButTheOptInTypes() {
        let all = DelegateSubscription(endpointID: "whe_1", events: nil)
        for type in EventType.allCases {
            #expect(all.subscribes(to: type) == (type != .dataTaskDidReceiveData), "\(type)")
        }
    }

    @Test func aFilterListsExactlyWhatIsSent() {
        let some = DelegateSubscription(endpointID: "whe_1", events: [.taskDidCompleteWithError, .dataTaskDidReceiveData])
        #expect(some.subscribes(to: .taskDidCompleteWithError))
        #expect(some.subscribes(to: .dataTaskDidReceiveData))
        #expect(!some.subscribes(to: .taskWillPerformHTTPRedirection))
        #expect(!DelegateSubscription(endpointID: "whe_1", events: []).subscribes(to: .taskDidCompleteWithError))
    }
}
